import { createLogger, loadConfigOrExit } from '@agent-platform/kit';
import { startTelemetry } from '@agent-platform/kit/telemetry';
import closeWithGrace from 'close-with-grace';
import { buildIdentityService, loadIdentityConfig } from './service.js';

// The service's own stop is bounded (gRPC drain, then the pool); this is the outer bound.
const SHUTDOWN_DELAY_MS = 15_000;

const config = loadConfigOrExit(() => loadIdentityConfig(process.env));
const telemetry = startTelemetry({ serviceName: 'identity', otlpEndpoint: config.otlpEndpoint });
const logger = createLogger({ service: 'identity', level: config.logLevel });
const service = await buildIdentityService(config, { logger });

closeWithGrace({ delay: SHUTDOWN_DELAY_MS, logger }, async ({ err }) => {
  if (err) logger.error({ err }, 'shutting down after an error');
  await service.stop();
  await telemetry.shutdown();
});

await service.start();
