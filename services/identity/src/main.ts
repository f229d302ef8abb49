import { createLogger, loadConfigOrExit } from '@agent-platform/kit';
import { NatsEventBus } from '@agent-platform/kit/events';
import { startTelemetry } from '@agent-platform/kit/telemetry';
import closeWithGrace from 'close-with-grace';
import { buildIdentityService, loadIdentityConfig } from './service.js';

// The service's own stop is bounded (gRPC drain, relay, pool), and so is the bus's close; this is the outer bound.
const SHUTDOWN_DELAY_MS = 15_000;

const config = loadConfigOrExit(() => loadIdentityConfig(process.env, { requireNats: true }));
const telemetry = startTelemetry({ serviceName: 'identity', otlpEndpoint: config.otlpEndpoint });
const logger = createLogger({ service: 'identity', level: config.logLevel });
const bus = await NatsEventBus.connect({ servers: config.natsUrl, name: 'identity', logger });
const service = await buildIdentityService(config, { logger, bus });

closeWithGrace({ delay: SHUTDOWN_DELAY_MS, logger }, async ({ err }) => {
  if (err) logger.error({ err }, 'shutting down after an error');
  await service.stop();
  await bus.close();
  await telemetry.shutdown();
});

await service.start();
