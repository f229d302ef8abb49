import { createLogger } from '@agent-platform/kit';
import { startTelemetry } from '@agent-platform/kit/telemetry';
import { buildIdentityService, loadIdentityConfig } from './service.js';

const config = loadIdentityConfig(process.env);
const telemetry = startTelemetry({ serviceName: 'identity', otlpEndpoint: config.otlpEndpoint });
const logger = createLogger({ service: 'identity', level: config.logLevel });
const service = await buildIdentityService(config, { logger });
await service.start();

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    service
      .stop()
      .then(() => telemetry.shutdown())
      .then(
        () => process.exit(0),
        (error: unknown) => {
          logger.error({ err: error }, 'shutdown failed');
          process.exit(1);
        },
      );
  });
}
