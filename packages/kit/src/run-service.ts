import closeWithGrace from 'close-with-grace';
import { loadConfigOrExit } from './config.js';
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
  stop(): Promise<void>;
}

export interface RunServiceOptions<Config extends ServiceProcessConfig> {
  /** Names the process in logs, traces and NATS connections. */
  name: string;
  /** Parses the environment; an invalid one ends the process with one line per variable. */
  loadConfig: () => Config;
  build: (config: Config, deps: { logger: Logger; bus: EventBus }) => Promise<RunnableService>;
  /** Outer bound on shutdown (milliseconds); the service's own stop is bounded within it. */
  shutdownDelayMs: number;
}

/**
 * A service's `main` in the distributed mode: configuration, telemetry, logger, the NATS bus, the
 * service, and a shutdown on SIGINT/SIGTERM (or a crash) that stops them in reverse order.
 */
export async function runService<Config extends ServiceProcessConfig>(options: RunServiceOptions<Config>): Promise<void> {
  const config = loadConfigOrExit(options.loadConfig);
  const metrics = loadConfigOrExit(() => metricsAddressFrom(process.env));
  // Usually already started by `--import @agent-platform/kit/telemetry/register` (see package.json);
  // this call opens the metrics listener.
  const telemetry = await startTelemetry({ serviceName: options.name, otlpEndpoint: config.otlpEndpoint, metrics });
  const logger = createLogger({ service: options.name, level: config.logLevel });
  const bus = await NatsEventBus.connect({ servers: config.natsUrl, name: options.name, logger });
  const service = await options.build(config, { logger, bus });

  closeWithGrace({ delay: options.shutdownDelayMs, logger }, async ({ err }) => {
    if (err) logger.error({ err }, 'shutting down after an error');
    await service.stop();
    await bus.close();
    await telemetry.shutdown();
  });

  await service.start();
}
