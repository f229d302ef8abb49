import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EntitySchema } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../logger.js';
import { startTelemetry, type Telemetry } from '../telemetry/index.js';
import { createTestDatabase, type TestDatabase } from '../testing/index.js';
import { initOrm, type Orm } from './orm.js';

const logger = createLogger({ service: 'kit-test', level: 'silent' });
// MikroORM wants an entity; these ORMs only lend out connections, so it needs no table.
const Probe = new EntitySchema<{ id: string }>({ name: 'Probe', properties: { id: { type: 'string', primary: true } } });
const noMigrations = { entities: [Probe], migrations: [], logger };

let telemetry: Telemetry;
const databases: TestDatabase[] = [];

beforeAll(async () => {
  telemetry = await startTelemetry({ serviceName: 'pool-metrics-test' });
  for (const name of ['kit_pool_a', 'kit_pool_b']) databases.push(await createTestDatabase({ name, migrations: [], migrate: async () => {} }));
});

afterAll(async () => {
  for (const database of databases) await database.drop();
  await telemetry.shutdown();
});

/** The pool metrics of the scrape, as `metric{state,pool} value` lines. */
async function poolLines(): Promise<string[]> {
  const server = createServer((request, response) => telemetry.serveMetrics(request, response));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const text = await (await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`)).text();
    return text
      .split('\n')
      .filter((line) => line.startsWith('db_client_connection'))
      .map((line) => {
        const [, metric, labels, value] = /^(\w+)\{(.*)\} (\S+)$/.exec(line)!;
        const label = (name: string) => new RegExp(`${name}="([^"]*)"`).exec(labels!)?.[1];
        const state = label('db_client_connection_state');
        return `${metric}{${state ? `${state},` : ''}${label('db_client_connection_pool_name')?.split('/')[1]}} ${value}`;
      })
      .sort();
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
}

const poolOf = (orm: Orm) => orm.em.getConnection().getNativeClient();

describe('the pool metrics', () => {
  it('report each pool of the process by name, read from the pool when scraped, and a closed pool as empty', async () => {
    const [a, b] = databases.map((database) => new URL(database.url).pathname.slice(1)) as [string, string];
    const ormA = await initOrm({ clientUrl: databases[0]!.url, poolMax: 3, ...noMigrations });
    const ormB = await initOrm({ clientUrl: databases[1]!.url, poolMax: 1, ...noMigrations });
    const [poolA, poolB] = [await poolOf(ormA), await poolOf(ormB)];
    const heldA = await Promise.all([1, 2, 3].map(() => poolA.connect()));
    heldA.pop()!.release();
    const heldB = await poolB.connect();
    const waiting = poolB.connect();
    try {
      expect(await poolLines()).toEqual(
        [
          `db_client_connection_count{idle,${a}} 1`,
          `db_client_connection_count{used,${a}} 2`,
          `db_client_connection_max{${a}} 3`,
          `db_client_connection_pending_requests{${a}} 0`,
          `db_client_connection_count{idle,${b}} 0`,
          `db_client_connection_count{used,${b}} 1`,
          `db_client_connection_max{${b}} 1`,
          `db_client_connection_pending_requests{${b}} 1`,
        ].sort(),
      );
    } finally {
      heldB.release();
      (await waiting).release();
      for (const client of heldA) client.release();
      await ormB.close();
    }
    const afterwards = await poolLines();
    expect(afterwards).toContain(`db_client_connection_count{idle,${a}} 3`);
    expect(afterwards).toContain(`db_client_connection_count{used,${a}} 0`);
    // Closed, it holds nothing and may open nothing.
    expect(afterwards.filter((line) => line.includes(b))).toEqual(
      [`db_client_connection_count{idle,${b}} 0`, `db_client_connection_count{used,${b}} 0`, `db_client_connection_max{${b}} 0`, `db_client_connection_pending_requests{${b}} 0`].sort(),
    );
    await ormA.close();
  });
});
