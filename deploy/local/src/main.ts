import { createLogger, loadConfigOrExit } from '@agent-platform/kit';
import { startTelemetry } from '@agent-platform/kit/telemetry';
import closeWithGrace from 'close-with-grace';
import { loadLocalConfig } from './config.js';
import { ensurePortsFree } from './ports.js';
import { explainStartupFailure } from './startup-failures.js';

// Each part stops within its own bound; this is the outer one, so Ctrl-C always ends the process.
const SHUTDOWN_DELAY_MS = 20_000;

const config = loadConfigOrExit(() => loadLocalConfig());
const { launcher } = config;
const logger = createLogger({ service: 'local', level: launcher.LOG_LEVEL });
const startedAt = performance.now();
const { platform, telemetry } = await start().catch((error: unknown) => {
  // One line with the cause and its fix; the stack is for LOG_LEVEL=debug.
  logger.debug({ err: error }, 'start-up failed');
  process.stderr.write(`${explainStartupFailure(error, config)}\n`);
  process.exit(1);
});
logger.info({ url: platform.url, startup_ms: Math.round(performance.now() - startedAt) }, 'agent platform is up');
process.stdout.write(
  `\nAgent platform running at ${platform.url}\n  Console   ${platform.url}/console\n  REST API  ${platform.url}/api/v1\n  API docs  ${platform.url}/docs\n  Metrics   ${platform.url}/metrics\n  Press Ctrl-C to stop.\n\n`,
);

closeWithGrace({ delay: SHUTDOWN_DELAY_MS, logger }, async ({ signal, err }) => {
  if (err) logger.error({ err }, 'stopping after an error');
  else logger.info({ signal }, 'stopping');
  await platform.stop();
  await telemetry.shutdown();
});

async function start() {
  await ensurePortsFree(config);
  // Only now the services' code (seconds of loading): a taken port is refused at once, not after it.
  const { startLocalPlatform } = await import('./launcher.js');
  // Usually already started by `--import @agent-platform/kit/telemetry/register` (see package.json).
  // Metrics are served on the gateway's port, so copies side by side need no port each for them;
  // METRICS_PORT adds a listener of their own.
  const metricsPort = launcher.METRICS_PORT === 'off' ? undefined : launcher.METRICS_PORT;
  const telemetry = await startTelemetry({
    serviceName: 'local',
    otlpEndpoint: launcher.OTEL_EXPORTER_OTLP_ENDPOINT,
    metrics: metricsPort === undefined ? undefined : { host: launcher.METRICS_HOST, port: metricsPort },
  });
  const platform = await startLocalPlatform(config, logger, { metrics: telemetry.serveMetrics, notice: (line) => process.stdout.write(`${line}\n`) });
  return { platform, telemetry };
}
