import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { buildGateway, type Gateway } from '@agent-platform/gateway';
import { buildIdentityService, type IdentityService } from '@agent-platform/identity';
import { createLogger, type Logger } from '@agent-platform/kit';
import { InProcessEventBus } from '@agent-platform/kit/events';
import { buildWebhookDispatcherService, CONSUMER_NAME as WEBHOOK_CONSUMER, type WebhookDispatcherService } from '@agent-platform/webhook-dispatcher';
import type { LocalConfig } from './config.js';
import { startEmbeddedPostgres, type EmbeddedDatabaseServer } from './embedded-postgres.js';
import { readOrCreateSecret } from './local-secrets.js';

export interface LocalPlatform {
  /** The gateway's base address, e.g. http://localhost:8080. */
  url: string;
  stop(): Promise<void>;
}

/** One database per service, as in the distributed mode. */
const DATABASES = { identity: 'agent_platform_identity', webhooks: 'agent_platform_webhooks' } as const;

/**
 * Every service in this process, each on its own loopback gRPC port, and the gateway in front:
 * the same code paths as the distributed mode with the embedded adapters. Stops in reverse order.
 */
export async function startLocalPlatform(config: LocalConfig, logger: Logger): Promise<LocalPlatform> {
  const stack: (() => Promise<void>)[] = [];
  const stop = async () => {
    for (const step of stack.reverse()) {
      await step().catch((error: unknown) => logger.error({ err: error }, 'error while stopping'));
    }
    stack.length = 0;
  };

  try {
    const database = await openDatabaseServer(config, logger);
    stack.push(() => database.stop());

    // Every durable consumer this process runs is named here, so no event is stamped sent before they all have it.
    const bus = new InProcessEventBus({ consumers: [WEBHOOK_CONSUMER], logger: serviceLogger('events', config) });
    stack.push(() => bus.close());

    // Consumers first, then the services whose outbox relays publish to them.
    const webhookDispatcher: WebhookDispatcherService = await buildWebhookDispatcherService(
      {
        ...config.webhookDispatcher,
        databaseUrl: database.urlFor(DATABASES.webhooks),
        grpcHost: '127.0.0.1',
        grpcPort: config.launcher.WEBHOOK_DISPATCHER_GRPC_PORT,
        secretKey: await webhookSecretKey(config),
      },
      { logger: serviceLogger('webhook-dispatcher', config), bus },
    );
    const { port: webhookDispatcherPort } = await webhookDispatcher.start();
    stack.push(() => webhookDispatcher.stop());

    const identity: IdentityService = await buildIdentityService(
      { ...config.identity, databaseUrl: database.urlFor(DATABASES.identity), grpcHost: '127.0.0.1', grpcPort: config.launcher.IDENTITY_GRPC_PORT },
      { logger: serviceLogger('identity', config), bus },
    );
    const { port: identityPort } = await identity.start();
    stack.push(() => identity.stop());

    const gateway: Gateway = await buildGateway(
      {
        ...config.gateway,
        PORT: config.launcher.PORT,
        IDENTITY_ADDR: `127.0.0.1:${identityPort}`,
        WEBHOOK_DISPATCHER_ADDR: `127.0.0.1:${webhookDispatcherPort}`,
      },
      { logger: serviceLogger('gateway', config) },
    );
    const { url } = await gateway.start();
    stack.push(() => gateway.stop());

    return { url, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** The operator's key when given; otherwise one made on first start and kept with the data. */
async function webhookSecretKey({ launcher }: LocalConfig): Promise<Buffer> {
  if (launcher.WEBHOOK_SECRET_KEY) return Buffer.from(launcher.WEBHOOK_SECRET_KEY, 'base64');
  const dataDir = resolve(launcher.DATA_DIR);
  await mkdir(dataDir, { recursive: true });
  const encoded = await readOrCreateSecret(join(dataDir, 'webhook-secret-key'), () => randomBytes(32).toString('base64'));
  return Buffer.from(encoded, 'base64');
}

function serviceLogger(service: string, config: LocalConfig): Logger {
  return createLogger({ service, level: config.launcher.LOG_LEVEL });
}

async function openDatabaseServer({ launcher }: LocalConfig, logger: Logger): Promise<EmbeddedDatabaseServer> {
  if (launcher.DATABASE_URL) {
    const base = new URL(launcher.DATABASE_URL);
    return {
      urlFor: (name) => Object.assign(new URL(base), { pathname: `/${name}` }).toString(),
      stop: () => Promise.resolve(),
    };
  }
  return startEmbeddedPostgres({
    dataDir: resolve(launcher.DATA_DIR),
    port: launcher.EMBEDDED_PG_PORT,
    databases: Object.values(DATABASES),
    logger: logger.child({ component: 'embedded-postgres' }),
  });
}
