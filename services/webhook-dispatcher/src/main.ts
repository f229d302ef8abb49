import { runService } from '@agent-platform/kit/run-service';
import { buildWebhookDispatcherService, loadWebhookDispatcherConfig } from './service.js';

await runService({
  name: 'webhook-dispatcher',
  loadConfig: () => loadWebhookDispatcherConfig(process.env),
  build: buildWebhookDispatcherService,
  // The service's own stop is bounded (worker, consumer, gRPC drain, pool), and so is the bus's close.
  shutdownDelayMs: 25_000,
});
