import { createLogger, loadConfigOrExit } from '@agent-platform/kit';
import { NatsEventBus } from '@agent-platform/kit/events';
import { startTelemetry } from '@agent-platform/kit/telemetry';
import closeWithGrace from 'close-with-grace';
import { buildWebhookDispatcherService, loadWebhookDispatcherConfig } from './service.js';

// The service's own stop is bounded (worker, consumer, gRPC drain, pool); this is the outer bound.
const SHUTDOWN_DELAY_MS = 25_000;

const config = loadConfigOrExit(() => loadWebhookDispatcherConfig(process.env));
const telemetry = startTelemetry({ serviceName: 'webhook-dispatcher', otlpEndpoint: config.otlpEndpoint });
const logger = createLogger({ service: 'webhook-dispatcher', level: config.logLevel });
const bus = await NatsEventBus.connect({ servers: config.natsUrl, name: 'webhook-dispatcher', logger });
const service = await buildWebhookDispatcherService(config, { logger, bus });

closeWithGrace({ delay: SHUTDOWN_DELAY_MS, logger }, async ({ err }) => {
  if (err) logger.error({ err }, 'shutting down after an error');
  await service.stop();
  await bus.close();
  await telemetry.shutdown();
});

await service.start();
