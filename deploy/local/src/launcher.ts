import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { buildAgentMemoryService } from '@agent-platform/agent-memory';
import { buildGateway, type BackendTransports, type Gateway, type GatewayDeps, type MetricsHandler } from '@agent-platform/gateway';
import { buildIdentityService } from '@agent-platform/identity';
import { createLogger, IN_PROCESS_DRAIN, type Logger } from '@agent-platform/kit';
import type { ChannelTransport, InProcessServing } from '@agent-platform/kit/grpc';
import { InProcessEventBus, NatsEventBus, type EventBus } from '@agent-platform/kit/events';
import { buildWebhookDispatcherService, CONSUMER_NAME as WEBHOOK_CONSUMER } from '@agent-platform/webhook-dispatcher';
import { buildWorkflowRunnerService } from '@agent-platform/workflow-runner';
import type { LocalConfig } from './config.js';
import { useDatabaseServer, type DatabaseServer } from './databases.js';
import { startEmbeddedPostgres } from './embedded-postgres.js';
import { readOrCreateSecret } from './local-secrets.js';

export interface LocalPlatform {
  /** The gateway's base address, e.g. http://localhost:8080. */
  url: string;
  /** The database of each service, by service name (tests inspect and drop them). */
  databases: Readonly<Record<ServiceName, string>>;
  /** The gateway itself: tests inject requests into its Fastify app without a socket. */
  gateway: Gateway;
  stop(): Promise<void>;
}

/** What `pnpm start` (metrics only) and a test assembling the platform may choose. */
export interface LocalPlatformOptions {
  /** Serves `/metrics` on the gateway's port: `pnpm start` passes its telemetry's. */
  metrics?: MetricsHandler;
  /** Databases made beforehand (cloned from migrated templates), instead of `<prefix><service>`. */
  databases?: Readonly<Record<ServiceName, string>>;
  /**
   * Wraps the gateway's in-process transports to the services, e.g. to record calls or to make one
   * fail on demand; the services behind them are the real ones.
   */
  wrapBackends?: (real: Required<BackendTransports>) => BackendTransports;
  /** The gateway's clock (tests outlast a token or a key with it) and logger (tests read its lines). */
  gateway?: Partial<Pick<GatewayDeps, 'now' | 'logger'>>;
  /** What the person at the terminal is told while it starts (pnpm start prints it). */
  notice?: (line: string) => void;
}

/** The keys a platform makes on first start when the operator gives none, by file name. */
export type LocalKeyFile = 'webhook-secret-key' | 'jwt-key-encryption-key' | 'tool-secret-key';

/** The services with a database of their own, as in the distributed mode. */
export const SERVICES = ['identity', 'agents', 'webhooks', 'workflows'] as const;
export type ServiceName = (typeof SERVICES)[number];

/** The database names of one platform: `<DATABASE_NAME_PREFIX><service>`. */
export function databaseNames(prefix: string): Record<ServiceName, string> {
  return Object.fromEntries(SERVICES.map((service) => [service, `${prefix}${service}`])) as Record<ServiceName, string>;
}

/**
 * Every service in this process, each on its own loopback gRPC port, and the gateway in front:
 * the same code paths as the distributed mode with the embedded adapters (or, when the
 * configuration names them, a PostgreSQL server and NATS). `pnpm start`, the integration tests
 * and the benchmarks all assemble the platform here. Stops in reverse order.
 */
export async function startLocalPlatform(config: LocalConfig, logger: Logger, options: LocalPlatformOptions = {}): Promise<LocalPlatform> {
  const stack: (() => Promise<void>)[] = [];
  const stop = async () => {
    for (const step of stack.reverse()) {
      await step().catch((error: unknown) => logger.error({ err: error }, 'error while stopping'));
    }
    stack.length = 0;
  };
  const { launcher } = config;
  // Chosen once: every client in this process either calls its service directly or over loopback.
  const inProcess = (service: InProcessServing) => (launcher.GRPC_TRANSPORT === 'in-process' ? service.inProcess : undefined);
  const databases = options.databases ?? databaseNames(launcher.DATABASE_NAME_PREFIX);

  try {
    const database = await openDatabaseServer(config, Object.values(databases), logger, options.notice);
    stack.push(() => database.stop());
    const busFor = eventTransport(config, stack);

    // Consumers first, then the services whose outbox relays publish to them.
    const webhookDispatcher = await buildWebhookDispatcherService(
      {
        ...config.webhookDispatcher,
        databaseUrl: database.urlFor(databases.webhooks),
        grpcHost: '127.0.0.1',
        grpcPort: launcher.WEBHOOK_DISPATCHER_GRPC_PORT,
        secretKey: await localKey(launcher.DATA_DIR, launcher.WEBHOOK_SECRET_KEY, 'webhook-secret-key'),
      },
      { logger: serviceLogger('webhook-dispatcher', config), bus: await busFor('webhook-dispatcher') },
    );
    const { port: webhookDispatcherPort } = await webhookDispatcher.start();
    stack.push(() => webhookDispatcher.stop());

    const identity = await buildIdentityService(
      {
        ...config.identity,
        databaseUrl: database.urlFor(databases.identity),
        grpcHost: '127.0.0.1',
        grpcPort: launcher.IDENTITY_GRPC_PORT,
        jwtKeyEncryptionKey: await localKey(launcher.DATA_DIR, launcher.JWT_KEY_ENCRYPTION_KEY, 'jwt-key-encryption-key'),
      },
      { logger: serviceLogger('identity', config), bus: await busFor('identity') },
    );
    const { port: identityPort } = await identity.start();
    stack.push(() => identity.stop());

    let workflowRunnerAt = (): ChannelTransport | string => {
      throw new Error('workflow-runner has not started yet');
    };
    const agentMemory = await buildAgentMemoryService(
      {
        ...config.agentMemory,
        databaseUrl: database.urlFor(databases.agents),
        grpcHost: '127.0.0.1',
        grpcPort: launcher.AGENT_MEMORY_GRPC_PORT,
        identityAddr: `127.0.0.1:${identityPort}`,
        toolSecretKey: await localKey(launcher.DATA_DIR, launcher.TOOL_SECRET_KEY, 'tool-secret-key'),
        // One index directory per database, so platforms sharing a DATA_DIR never share an index.
        vectorIndexDir: config.agentMemory.vectorIndexDir ?? join(resolve(launcher.DATA_DIR), 'vectors', databases.agents),
      },
      {
        logger: serviceLogger('agent-memory', config),
        bus: await busFor('agent-memory'),
        identityTransport: inProcess(identity),
        // workflow-runner calls agent-memory, so it starts after it: agent-memory reaches it at its first question.
        workflowRunnerTransport: () => workflowRunnerAt(),
      },
    );
    const { port: agentMemoryPort } = await agentMemory.start();
    stack.push(() => agentMemory.stop());

    const workflowRunner = await buildWorkflowRunnerService(
      {
        ...config.workflowRunner,
        databaseUrl: database.urlFor(databases.workflows),
        grpcHost: '127.0.0.1',
        grpcPort: launcher.WORKFLOW_RUNNER_GRPC_PORT,
        ingressHost: '127.0.0.1',
        ingressPort: launcher.WORKFLOW_INGRESS_PORT,
        agentMemoryAddr: `127.0.0.1:${agentMemoryPort}`,
      },
      { logger: serviceLogger('workflow-runner', config), bus: await busFor('workflow-runner'), agentMemoryTransport: inProcess(agentMemory) },
    );
    const { port: workflowRunnerPort, ingressPort } = await workflowRunner.start();
    workflowRunnerAt = () => inProcess(workflowRunner) ?? `127.0.0.1:${workflowRunnerPort}`;
    stack.push(() => workflowRunner.stop());

    const gateway = await buildGateway(
      {
        ...config.gateway,
        PORT: launcher.PORT,
        IDENTITY_ADDR: `127.0.0.1:${identityPort}`,
        AGENT_MEMORY_ADDR: `127.0.0.1:${agentMemoryPort}`,
        WEBHOOK_DISPATCHER_ADDR: `127.0.0.1:${webhookDispatcherPort}`,
        WORKFLOW_RUNNER_ADDR: `127.0.0.1:${workflowRunnerPort}`,
        WORKFLOW_INGRESS_URL: `http://127.0.0.1:${ingressPort}`,
      },
      {
        logger: options.gateway?.logger ?? serviceLogger('gateway', config),
        ...(options.gateway?.now ? { now: options.gateway.now } : {}),
        ...(options.metrics ? { metrics: options.metrics } : {}),
        backends: gatewayBackends(
          {
            identity: identity.inProcess,
            agentMemory: agentMemory.inProcess,
            webhookDispatcher: webhookDispatcher.inProcess,
            workflowRunner: workflowRunner.inProcess,
            workflowIngress: workflowRunner.inProcessIngress,
          },
          launcher.GRPC_TRANSPORT,
          options.wrapBackends,
        ),
      },
    );
    const { url } = await gateway.start();
    stack.push(() => gateway.stop(IN_PROCESS_DRAIN));

    return { url, databases, gateway, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** The gateway's transports: the services in this process, or none (their addresses) over the network. */
function gatewayBackends(
  inProcessTransports: Required<BackendTransports>,
  transport: LocalConfig['launcher']['GRPC_TRANSPORT'],
  wrap: LocalPlatformOptions['wrapBackends'],
): BackendTransports {
  if (wrap) return wrap(inProcessTransports);
  return transport === 'in-process' ? inProcessTransports : {};
}

/**
 * Each service's event bus: one in-process bus shared by all (the local default), or a NATS
 * connection per service as in the distributed mode. Buses close after the services stop.
 */
function eventTransport(config: LocalConfig, stack: (() => Promise<void>)[]): (service: string) => Promise<EventBus> {
  const natsUrl = config.launcher.NATS_URL;
  if (natsUrl === undefined) {
    // Every durable consumer this process runs is named here, so no event is stamped sent before they all have it.
    const bus = new InProcessEventBus({ consumers: [WEBHOOK_CONSUMER], logger: serviceLogger('events', config) });
    stack.push(() => bus.close());
    return () => Promise.resolve(bus);
  }
  return async (service) => {
    const bus = await NatsEventBus.connect({ servers: natsUrl, name: service, logger: serviceLogger(service, config) });
    stack.push(() => bus.close());
    return bus;
  };
}

/**
 * The operator's key when given; otherwise one made on first start and kept in `dataDir` (the
 * all-in-one mode's and `start:mesh`'s alike, so both read the same data with the same keys).
 */
export async function localKey(dataDir: string, given: Buffer | undefined, file: LocalKeyFile): Promise<Buffer> {
  if (given) return given;
  await mkdir(resolve(dataDir), { recursive: true });
  const encoded = await readOrCreateSecret(join(resolve(dataDir), file), () => randomBytes(32).toString('base64'));
  return Buffer.from(encoded, 'base64');
}

function serviceLogger(service: string, config: LocalConfig): Logger {
  return createLogger({ service, level: config.launcher.LOG_LEVEL });
}

function openDatabaseServer({ launcher }: LocalConfig, names: readonly string[], logger: Logger, notice: ((line: string) => void) | undefined): Promise<DatabaseServer> {
  if (launcher.DATABASE_URL) return useDatabaseServer(launcher.DATABASE_URL, names, logger.child({ component: 'database' }));
  return startEmbeddedPostgres({
    dataDir: resolve(launcher.DATA_DIR),
    port: launcher.EMBEDDED_PG_PORT,
    databases: names,
    logger: logger.child({ component: 'embedded-postgres' }),
    ...(notice ? { notice } : {}),
  });
}
