import { createLogger } from '@agent-platform/kit';
import { startTelemetry } from '@agent-platform/kit/telemetry';
import { loadLocalConfig } from './config.js';
import { startLocalPlatform } from './launcher.js';

const config = loadLocalConfig();
const logger = createLogger({ service: 'local', level: config.LOG_LEVEL });
const telemetry = startTelemetry({ serviceName: 'agent-platform-local', otlpEndpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT });
const startedAt = performance.now();
const platform = await startLocalPlatform(config, process.env, logger);
logger.info({ url: platform.url, startup_ms: Math.round(performance.now() - startedAt) }, 'agent platform is up');
process.stdout.write(`\nAgent platform running at ${platform.url}\n  REST API  ${platform.url}/api/v1\n  API docs  ${platform.url}/docs\n  Press Ctrl-C to stop.\n\n`);

let stopping = false;
const shutdown = (signal: NodeJS.Signals) => {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, 'stopping');
  // A second bound in case something hangs: the process must end on Ctrl-C.
  setTimeout(() => process.exit(1), 20_000).unref();
  platform
    .stop()
    .then(() => telemetry.shutdown())
    .then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'failed to stop cleanly');
        process.exit(1);
      },
    );
};
process.on('SIGINT', shutdown);
process.on('SIGTERM', shutdown);
