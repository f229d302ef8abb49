import { createLogger } from '@agent-platform/kit';
import { buildIdentityService, loadIdentityConfig } from './service.js';

const config = loadIdentityConfig(process.env);
const logger = createLogger({ service: 'identity', level: config.logLevel });
const service = await buildIdentityService(config, { logger });
await service.start();

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    service.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  });
}
