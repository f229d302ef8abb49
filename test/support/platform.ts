import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as agentMemory from '@agent-platform/agent-memory';
import * as identity from '@agent-platform/identity';
import { createLogger, type Logger } from '@agent-platform/kit';
import type { NamedMigration, Orm } from '@agent-platform/kit/db';
import { createTestDatabase, DEFAULT_TEST_DATABASE_URL, type TestDatabase } from '@agent-platform/kit/testing';
import { loadLocalConfig, startLocalPlatform, type LocalPlatform, type LocalPlatformOptions, type ServiceName } from '@agent-platform/local';
import * as webhookDispatcher from '@agent-platform/webhook-dispatcher';
import * as workflowRunner from '@agent-platform/workflow-runner';

const ADMIN_URL = process.env.TEST_DATABASE_URL ?? DEFAULT_TEST_DATABASE_URL;
const logger = createLogger({ service: 'test-platform', level: 'silent' });

export interface TestPlatform extends LocalPlatform {
  /** The REST API's base, `<url>/api/v1`. */
  api: string;
  /** SQL on each service's database, for what no API does (seeding, asserting what was stored). */
  sql: Readonly<Record<ServiceName, Pick<TestDatabase, 'query'>>>;
}

interface Schema {
  migrations: readonly NamedMigration[];
  openDatabase(url: string, logger: Logger): Promise<Orm>;
}

/** Each service's schema, under the names the services' own tests give their templates. */
const SCHEMAS: Record<ServiceName, Schema> = { identity, agents: agentMemory, webhooks: webhookDispatcher, workflows: workflowRunner };

/**
 * The whole platform in this process, assembled exactly as `pnpm start` assembles it, on databases
 * of the real PostgreSQL cloned from migrated templates (so no test waits for migrations), dropped
 * on stop. `env` is read as the launcher reads the environment: `NATS_URL` carries events over NATS
 * instead of in process, service variables (OUTBOX_RETRY_MAX_MS, ALLOW_PRIVATE_NETWORK_URLS, …)
 * reach their service. `options` are the launcher's test hooks (wrapped backends, the gateway's clock).
 */
export async function startTestPlatform(env: Record<string, string> = {}, options: Omit<LocalPlatformOptions, 'databases'> = {}): Promise<TestPlatform> {
  // The embedded vector index (and any key file) lives here, never in the working directory.
  const dataDir = await mkdtemp(join(tmpdir(), 'agent-platform-it-'));
  const databases = await cloneDatabases();
  const config = loadLocalConfig({
    DATA_DIR: dataDir,
    DATABASE_URL: ADMIN_URL,
    PORT: '0',
    IDENTITY_GRPC_PORT: '0',
    AGENT_MEMORY_GRPC_PORT: '0',
    WEBHOOK_DISPATCHER_GRPC_PORT: '0',
    WORKFLOW_RUNNER_GRPC_PORT: '0',
    WORKFLOW_INGRESS_PORT: '0',
    WEBHOOK_SECRET_KEY: randomBytes(32).toString('base64'),
    JWT_KEY_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    TOOL_SECRET_KEY: randomBytes(32).toString('base64'),
    LOG_LEVEL: 'silent',
    // The SSRF guard whole, as a server keeps it (pnpm start on loopback lifts it); a test that
    // calls local targets says so.
    ALLOW_PRIVATE_NETWORK_URLS: 'false',
    ...env,
  });
  const dropAll = async () => {
    await Promise.all(Object.values(databases).map((database) => database.drop()));
    await rm(dataDir, { recursive: true, force: true });
  };
  let platform: LocalPlatform;
  try {
    const names = Object.fromEntries(Object.entries(databases).map(([service, database]) => [service, database.name])) as Record<ServiceName, string>;
    platform = await startLocalPlatform(config, logger, { ...options, databases: names });
  } catch (error) {
    await dropAll();
    throw error;
  }
  return {
    ...platform,
    api: `${platform.url}/api/v1`,
    sql: databases,
    stop: async () => {
      await platform.stop();
      await dropAll();
    },
  };
}

async function cloneDatabases(): Promise<Record<ServiceName, TestDatabase>> {
  const entries = await Promise.all(
    Object.entries(SCHEMAS).map(async ([service, schema]) => {
      const database = await createTestDatabase({
        name: service,
        baseUrl: ADMIN_URL,
        migrations: schema.migrations,
        migrate: async (url) => (await schema.openDatabase(url, logger)).close(),
      });
      return [service, database] as const;
    }),
  );
  return Object.fromEntries(entries) as Record<ServiceName, TestDatabase>;
}
