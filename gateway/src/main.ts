import { createLogger, loadConfigOrExit } from '@agent-platform/kit';
import { metricsAddressFrom, startTelemetry } from '@agent-platform/kit/telemetry';
import closeWithGrace from 'close-with-grace';
import { buildGateway, loadGatewayConfig } from './gateway.js';

const config = loadConfigOrExit(() => loadGatewayConfig(process.env));
const metrics = loadConfigOrExit(() => metricsAddressFrom(process.env));
// Usually already started by `--import @agent-platform/kit/telemetry/register` (see package.json);
// this call opens the metrics listener (METRICS_PORT, off the public port).
const telemetry = await startTelemetry({ serviceName: 'gateway', otlpEndpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT, metrics });
const logger = createLogger({ service: 'gateway', level: config.LOG_LEVEL });
const gateway = await buildGateway(config, { logger });

closeWithGrace({ delay: config.SHUTDOWN_DELAY_MS + config.SHUTDOWN_GRACE_MS + 1_000, logger }, async ({ err }) => {
  if (err) logger.error({ err }, 'shutting down after an error');
  await gateway.stop();
  await telemetry.shutdown();
});

const { url } = await gateway.start();
logger.info({ url }, 'gateway listening');
