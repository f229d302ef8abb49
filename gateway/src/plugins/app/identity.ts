import type { PromiseClient } from '@agent-platform/kit/grpc';
import { ApiKeyServiceService } from '@agent-platform/proto/identity/v1/api-keys';
import { AuthServiceService } from '@agent-platform/proto/identity/v1/auth';
import { BillingServiceService } from '@agent-platform/proto/identity/v1/billing';
import { MemberServiceService, UserServiceService } from '@agent-platform/proto/identity/v1/users';
import fp from 'fastify-plugin';
import { openBackendChannel, type BackendPluginOptions } from './backend-channel.js';
import { HealthCheck, type HealthClient } from './grpc-health.js';

export interface IdentityClients {
  auth: PromiseClient<typeof AuthServiceService>;
  users: PromiseClient<typeof UserServiceService>;
  members: PromiseClient<typeof MemberServiceService>;
  apiKeys: PromiseClient<typeof ApiKeyServiceService>;
  billing: PromiseClient<typeof BillingServiceService>;
  health: HealthClient;
}

/** Typed clients of the identity service over one channel. */
export default fp(
  (app, options: BackendPluginOptions, done) => {
    const channel = openBackendChannel(app, options, app.config.IDENTITY_ADDR);
    app.decorate('identity', {
      auth: channel.client(AuthServiceService),
      users: channel.client(UserServiceService),
      members: channel.client(MemberServiceService),
      apiKeys: channel.client(ApiKeyServiceService),
      billing: channel.client(BillingServiceService),
      health: channel.client(HealthCheck),
    } satisfies IdentityClients);
    done();
  },
  { name: 'identity', dependencies: ['config'] },
);
