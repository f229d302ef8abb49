import type { PromiseClient } from '@agent-platform/kit/grpc';
import { WebhookServiceService } from '@agent-platform/proto/webhooks/v1';
import fp from 'fastify-plugin';
import { openBackendChannel, type BackendPluginOptions } from './backend-channel.js';
import { HealthCheck, type HealthClient } from './grpc-health.js';

export interface WebhookClients {
  /** Webhook endpoints and their delivery log, of the principal's tenant. */
  service: PromiseClient<typeof WebhookServiceService>;
  health: HealthClient;
}

/** Typed clients of the webhook-dispatcher service over its own channel. */
export default fp(
  (app, options: BackendPluginOptions, done) => {
    const channel = openBackendChannel(app, options, app.config.WEBHOOK_DISPATCHER_ADDR);
    app.decorate('webhooks', {
      service: channel.client(WebhookServiceService),
      health: channel.client(HealthCheck),
    } satisfies WebhookClients);
    done();
  },
  { name: 'webhooks', dependencies: ['config'] },
);
