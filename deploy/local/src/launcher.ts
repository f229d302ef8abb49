import { resolve } from 'node:path';
import { buildGateway, type Gateway } from '@agent-platform/gateway';
import { buildIdentityService, type IdentityService } from '@agent-platform/identity';
import { createLogger, type Logger } from '@agent-platform/kit';
import type { LocalConfig } from './config.js';
import { startEmbeddedPostgres, type EmbeddedDatabaseServer } from './embedded-postgres.js';

export interface LocalPlatform {
  /** The gateway's base address, e.g. http://localhost:8080. */
  url: string;
  stop(): Promise<void>;
}

/** One database per service, as in the distributed mode. */
const DATABASES = { identity: 'agent_platform_identity' } as const;

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

    const identity: IdentityService = await buildIdentityService(
      { ...config.identity, databaseUrl: database.urlFor(DATABASES.identity), grpcHost: '127.0.0.1', grpcPort: config.launcher.IDENTITY_GRPC_PORT },
      { logger: serviceLogger('identity', config) },
    );
    const { port: identityPort } = await identity.start();
    stack.push(() => identity.stop());

    const gateway: Gateway = await buildGateway(
      { ...config.gateway, PORT: config.launcher.PORT, IDENTITY_ADDR: `127.0.0.1:${identityPort}` },
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
