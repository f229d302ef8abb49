import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { COMMON_ENV, freePort, httpOk, startNode, waitUntil, type RunningProcess } from './processes.js';

const ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Each service as its own process, on real PostgreSQL and Redis, talking gRPC over loopback. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const database = `e2e_identity_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  await admin((client) => client.query(`CREATE DATABASE ${database}`));
  const databaseUrl = Object.assign(new URL(ADMIN_URL), { pathname: `/${database}` }).toString();
  const processes: RunningProcess[] = [];
  const teardown = async () => {
    for (const running of processes.reverse()) await running.stop();
    await admin((client) => client.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`));
  };

  try {
    const identityPort = await freePort();
    const identity = startNode('services/identity/src/main.ts', {
      ...COMMON_ENV,
      DATABASE_URL: databaseUrl,
      GRPC_HOST: '127.0.0.1',
      GRPC_PORT: String(identityPort),
    });
    processes.push(identity);

    const port = await freePort();
    const gateway = startNode('gateway/src/main.ts', {
      ...COMMON_ENV,
      HOST: '127.0.0.1',
      PORT: String(port),
      IDENTITY_ADDR: `127.0.0.1:${identityPort}`,
      REDIS_URL,
    });
    processes.push(gateway);

    const baseUrl = `http://127.0.0.1:${port}`;
    await waitUntil('the gateway and identity', gateway, () => httpOk(`${baseUrl}/readyz`), 120_000);
    project.provide('baseUrl', baseUrl);
    project.provide('mode', 'distributed');
  } catch (error) {
    await teardown();
    throw error;
  }
  return teardown;
}

async function admin<T>(run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}
