import { createLogger, loadConfigOrExit } from '@agent-platform/kit';
import { metricsAddressFrom, startTelemetry } from '@agent-platform/kit/telemetry';
import closeWithGrace from 'close-with-grace';
import { loadLocalConfig } from './config.js';
import { startLocalPlatform } from './launcher.js';

// Each part stops within its own bound; this is the outer one, so Ctrl-C always ends the process.
const SHUTDOWN_DELAY_MS = 20_000;

const config = loadConfigOrExit(() => loadLocalConfig());
const logger = createLogger({ service: 'local', level: config.launcher.LOG_LEVEL });
// Usually already started by `--import @agent-platform/kit/telemetry/register` (see package.json).
const telemetry = await startTelemetry({
  serviceName: 'local',
  otlpEndpoint: config.launcher.OTEL_EXPORTER_OTLP_ENDPOINT,
  metrics: metricsAddressFrom(process.env),
});
const startedAt = performance.now();
const platform = await startLocalPlatform(config, logger);
logger.info({ url: platform.url, startup_ms: Math.round(performance.now() - startedAt) }, 'agent platform is up');
process.stdout.write(`\nAgent platform running at ${platform.url}\n  REST API  ${platform.url}/api/v1\n  API docs  ${platform.url}/docs\n  Press Ctrl-C to stop.\n\n`);

closeWithGrace({ delay: SHUTDOWN_DELAY_MS, logger }, async ({ signal, err }) => {
  if (err) logger.error({ err }, 'stopping after an error');
  else logger.info({ signal }, 'stopping');
  await platform.stop();
  await telemetry.shutdown();
});
