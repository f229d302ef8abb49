import { GrpcChannel, type PromiseClient } from '@agent-platform/kit/grpc';
import { ApiKeyServiceService } from '@agent-platform/proto/identity/v1/api-keys';
import { AuthServiceService } from '@agent-platform/proto/identity/v1/auth';
import { BillingServiceService } from '@agent-platform/proto/identity/v1/billing';
import { MemberServiceService, UserServiceService } from '@agent-platform/proto/identity/v1/users';
import fp from 'fastify-plugin';
import { HealthCheck, type HealthClient } from './grpc-health.js';

export interface IdentityClients {
  auth: PromiseClient<typeof AuthServiceService>;
  users: PromiseClient<typeof UserServiceService>;
  members: PromiseClient<typeof MemberServiceService>;
  apiKeys: PromiseClient<typeof ApiKeyServiceService>;
  billing: PromiseClient<typeof BillingServiceService>;
  health: HealthClient;
}

/** Typed clients of the identity service over one channel, closed with the app. */
export default fp(
  (app, _options, done) => {
    const channel = new GrpcChannel(app.config.IDENTITY_ADDR, { defaultDeadlineMs: app.config.GRPC_DEADLINE_MS });
    app.decorate('identity', {
      auth: channel.client(AuthServiceService),
      users: channel.client(UserServiceService),
      members: channel.client(MemberServiceService),
      apiKeys: channel.client(ApiKeyServiceService),
      billing: channel.client(BillingServiceService),
      health: channel.client(HealthCheck),
    } satisfies IdentityClients);
    app.addHook('onClose', (_instance, next) => {
      channel.close();
      next();
    });
    done();
  },
  { name: 'identity', dependencies: ['config'] },
);
