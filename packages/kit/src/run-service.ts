import closeWithGrace from 'close-with-grace';
import { loadConfigOrExit } from './config.js';
import { loadDrain, type Drain } from './drain.js';
import { NatsEventBus, type EventBus } from './events/index.js';
import { createLogger, type Logger, type LoggerSettings } from './logger.js';
import { metricsAddressFrom, startTelemetry } from './telemetry/index.js';

/** What every service's configuration carries for its process. */
export interface ServiceProcessConfig {
  natsUrl: string;
  logLevel: LoggerSettings['level'];
  otlpEndpoint: string | undefined;
}

export interface RunnableService {
  start(): Promise<unknown>;
  /** Fails readiness at once, lets what is in flight finish within the drain, releases everything. */
  stop(drain: Drain): Promise<void>;
}

export interface RunServiceOptions<Config extends ServiceProcessConfig> {
  /** Names the process in logs, traces and NATS connections. */
  name: string;
  /** Parses the environment; an invalid one ends the process with one line per variable. */
  loadConfig: () => Config;
  build: (config: Config, deps: { logger: Logger; bus: EventBus }) => Promise<RunnableService>;
}

/** Beyond the drain, for closing pools, the bus and telemetry, before the process is ended anyway. */
const RELEASE_MS = 5_000;

/**
 * A service's `main` in the distributed mode: configuration, telemetry, logger, the NATS bus, the
 * service, and a shutdown on SIGINT/SIGTERM (or a crash) that drains the service (SHUTDOWN_GRACE_MS,
 * SHUTDOWN_DELAY_MS) and stops the rest in reverse order.
 */
export async function runService<Config extends ServiceProcessConfig>(options: RunServiceOptions<Config>): Promise<void> {
  const config = loadConfigOrExit(options.loadConfig);
  const drain = loadConfigOrExit(() => loadDrain(process.env));
  const metrics = loadConfigOrExit(() => metricsAddressFrom(process.env));
  // Usually already started by `--import @agent-platform/kit/telemetry/register` (see package.json);
  // this call opens the metrics listener.
  const telemetry = await startTelemetry({ serviceName: options.name, otlpEndpoint: config.otlpEndpoint, metrics });
  const logger = createLogger({ service: options.name, level: config.logLevel });
  const bus = await NatsEventBus.connect({ servers: config.natsUrl, name: options.name, logger });
  const service = await options.build(config, { logger, bus });

  closeWithGrace({ delay: drain.delayMs + drain.graceMs + RELEASE_MS, logger }, async ({ err }) => {
    if (err) logger.error({ err }, 'shutting down after an error');
    await service.stop(drain);
    await bus.close();
    await telemetry.shutdown();
  });

  await service.start();
}
