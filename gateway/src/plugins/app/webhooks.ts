import { GrpcChannel, type PromiseClient } from '@agent-platform/kit/grpc';
import { WebhookServiceService } from '@agent-platform/proto/webhooks/v1';
import fp from 'fastify-plugin';
import { HealthCheck, type HealthClient } from './grpc-health.js';

export interface WebhookClients {
  /** Webhook endpoints and their delivery log, of the principal's tenant. */
  service: PromiseClient<typeof WebhookServiceService>;
  health: HealthClient;
}

/** Typed clients of the webhook-dispatcher service over its own channel, closed with the app. */
export default fp(
  (app, _options, done) => {
    const channel = new GrpcChannel(app.config.WEBHOOK_DISPATCHER_ADDR, { defaultDeadlineMs: app.config.GRPC_DEADLINE_MS });
    app.decorate('webhooks', {
      service: channel.client(WebhookServiceService),
      health: channel.client(HealthCheck),
    } satisfies WebhookClients);
    app.addHook('onClose', (_instance, next) => {
      channel.close();
      next();
    });
    done();
  },
  { name: 'webhooks', dependencies: ['config'] },
);
