import { runService } from '@agent-platform/kit/run-service';
import { buildWebhookDispatcherService, loadWebhookDispatcherConfig } from './service.js';

await runService({
  name: 'webhook-dispatcher',
  loadConfig: () => loadWebhookDispatcherConfig(process.env),
  build: buildWebhookDispatcherService,
});
