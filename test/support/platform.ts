import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '@agent-platform/kit';
import { loadLocalConfig, startLocalPlatform, type LocalPlatform } from '@agent-platform/local';
import pg from 'pg';

const ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface TestPlatform extends LocalPlatform {
  /** The REST API's base, `<url>/api/v1`. */
  api: string;
}

/**
 * The whole platform in this process, assembled exactly as `pnpm start` assembles it, on fresh
 * databases of the real PostgreSQL (dropped on stop). `env` is read as the launcher reads the
 * environment: `NATS_URL` carries events over NATS instead of in process, service variables
 * (OUTBOX_RETRY_MAX_MS, ALLOW_PRIVATE_NETWORK_URLS, …) reach their service.
 */
export async function startTestPlatform(env: Record<string, string> = {}): Promise<TestPlatform> {
  const prefix = `it_${randomBytes(5).toString('hex')}_`;
  // The embedded vector index (and any key file) lives here, never in the working directory.
  const dataDir = await mkdtemp(join(tmpdir(), 'agent-platform-it-'));
  const config = loadLocalConfig({
    DATA_DIR: dataDir,
    DATABASE_URL: ADMIN_URL,
    DATABASE_NAME_PREFIX: prefix,
    PORT: '0',
    IDENTITY_GRPC_PORT: '0',
    AGENT_MEMORY_GRPC_PORT: '0',
    WEBHOOK_DISPATCHER_GRPC_PORT: '0',
    WORKFLOW_RUNNER_GRPC_PORT: '0',
    WORKFLOW_INGRESS_PORT: '0',
    WEBHOOK_SECRET_KEY: randomBytes(32).toString('base64'),
    JWT_KEY_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    LOG_LEVEL: 'silent',
    ...env,
  });
  const platform = await startLocalPlatform(config, createLogger({ service: 'test-platform', level: 'silent' }));
  return {
    ...platform,
    api: `${platform.url}/api/v1`,
    stop: async () => {
      await platform.stop();
      await dropDatabases(Object.values(platform.databases));
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

async function dropDatabases(names: readonly string[]): Promise<void> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    for (const name of names) await client.query(`DROP DATABASE IF EXISTS ${client.escapeIdentifier(name)} WITH (FORCE)`);
  } finally {
    await client.end();
  }
}
