import { createHash, randomBytes } from 'node:crypto';
import pg from 'pg';
import type { NamedMigration } from '../db/orm.js';

export const DEFAULT_TEST_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

export interface TestDatabaseOptions {
  /** Short lowercase name of the owner, e.g. `identity`; prefixes every database made here. */
  name: string;
  /** The migration list; its names and code decide when the template must be rebuilt. */
  migrations: readonly NamedMigration[];
  /** Brings an empty database at `url` to the current schema (e.g. initOrm, then close). */
  migrate: (url: string) => Promise<void>;
  /** A server URL with rights to create databases; default `TEST_DATABASE_URL` or the local server. */
  baseUrl?: string;
}

/** A database of its own for one test file, cloned from the migrated template. */
export interface TestDatabase {
  readonly name: string;
  readonly url: string;
  /** The migrated template it was cloned from. */
  readonly template: string;
  /** Runs SQL against this database, for seeding and for asserting what was stored. */
  query<Row extends object = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<Row[]>;
  /** Drops the database, closing any connection still open to it. */
  drop(): Promise<void>;
}

// Test files' databases older than this are from dead runs, and templates of other migration sets
// this old are no longer in use: both get dropped.
const STALE_AFTER_MS = 6 * 60 * 60 * 1_000;
// CREATE DATABASE … TEMPLATE and RENAME refuse while a closing connection lingers: retry briefly.
const IN_USE_RETRY_MS = 10_000;

/**
 * Clones a fresh database from a migrated template: the template (`<name>_tpl_<hash>`) is built
 * once per migration set and reused across runs; vitest workers racing to build it serialise on
 * an advisory lock, and a half-built one is never picked up because it is renamed only when done.
 */
export async function createTestDatabase(options: TestDatabaseOptions): Promise<TestDatabase> {
  const baseUrl = options.baseUrl ?? process.env.TEST_DATABASE_URL ?? DEFAULT_TEST_DATABASE_URL;
  const prefix = options.name.toLowerCase().replace(/[^a-z0-9]/g, '_').slice(0, 20);
  const template = `${prefix}_tpl_${fingerprint(options.migrations)}`;
  const name = `${prefix}_t_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;

  const admin = await connect(baseUrl);
  try {
    await admin.query('select pg_advisory_lock(hashtext($1))', [template]);
    try {
      await ensureTemplate(admin, baseUrl, template, prefix, options.migrate);
      await dropStale(admin, prefix);
    } finally {
      await admin.query('select pg_advisory_unlock(hashtext($1))', [template]);
    }
    await whileInUse(() => admin.query(`create database ${quote(name)} template ${quote(template)}`));
  } finally {
    await admin.end();
  }

  const url = databaseUrl(baseUrl, name);
  // The connection, shared by queries made at once (each would otherwise open one, and those not
  // kept would be cut by the drop with an error nobody handles).
  let client: Promise<pg.Client> | undefined;
  return {
    name,
    url,
    template,
    async query<Row extends object>(sql: string, params: unknown[] = []): Promise<Row[]> {
      client ??= connect(url).catch((error: unknown) => {
        client = undefined;
        throw error;
      });
      const result = await (await client).query<Row>(sql, params);
      return result.rows;
    },
    async drop(): Promise<void> {
      const open = client;
      client = undefined;
      await open?.then((connected) => connected.end(), () => undefined);
      const dropper = await connect(baseUrl);
      try {
        await dropper.query(`drop database if exists ${quote(name)} with (force)`);
      } finally {
        await dropper.end();
      }
    },
  };
}

/**
 * A vitest fixture: `test.extend('database', { scope: 'file' }, databaseFixture({...}))` gives
 * each test file its own database, dropped when the file is done.
 */
export function databaseFixture(options: TestDatabaseOptions) {
  // vitest reads a fixture's dependencies from the destructured first parameter; there are none.
  // eslint-disable-next-line no-empty-pattern
  return async ({}: object, { onCleanup }: { onCleanup: (cleanup: () => Promise<void>) => void }): Promise<TestDatabase> => {
    const database = await createTestDatabase(options);
    onCleanup(() => database.drop());
    return database;
  };
}

async function ensureTemplate(
  admin: pg.Client,
  baseUrl: string,
  template: string,
  prefix: string,
  migrate: (url: string) => Promise<void>,
): Promise<void> {
  if (await databaseExists(admin, template)) return;
  const building = `${template}_new`;
  await admin.query(`drop database if exists ${quote(building)} with (force)`);
  await admin.query(`create database ${quote(building)}`);
  await migrate(databaseUrl(baseUrl, building));
  await whileInUse(() => admin.query(`alter database ${quote(building)} rename to ${quote(template)}`));
  // The build time, read back when pruning: a database has no creation time of its own.
  await admin.query(`comment on database ${quote(template)} is '${Date.now()}'`);
  // Templates of other migration sets go once stale, not at once: a second work tree with other
  // migrations may be cloning one right now, outside this template's lock.
  const old = await admin.query<{ datname: string; built: string | null }>(
    `select datname, shobj_description(oid, 'pg_database') as built from pg_database where datname like $1 and datname <> $2`,
    [`${prefix}\\_tpl\\_%`, template],
  );
  for (const row of old.rows) {
    const built = Number(row.built ?? 0);
    if (Date.now() - built > STALE_AFTER_MS) await admin.query(`drop database if exists ${quote(row.datname)} with (force)`);
  }
}

async function dropStale(admin: pg.Client, prefix: string): Promise<void> {
  const rows = await admin.query<{ datname: string }>(`select datname from pg_database where datname like $1`, [`${prefix}\\_t\\_%`]);
  for (const { datname } of rows.rows) {
    const created = Number.parseInt(datname.slice(prefix.length + 3).split('_')[0] ?? '', 36);
    if (Number.isFinite(created) && Date.now() - created > STALE_AFTER_MS) {
      await admin.query(`drop database if exists ${quote(datname)} with (force)`);
    }
  }
}

async function databaseExists(admin: pg.Client, name: string): Promise<boolean> {
  const result = await admin.query('select 1 from pg_database where datname = $1', [name]);
  return result.rowCount === 1;
}

async function whileInUse<T>(run: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + IN_USE_RETRY_MS;
  for (;;) {
    try {
      return await run();
    } catch (error) {
      // 55006 object_in_use: a connection to the source database has not gone yet.
      if ((error as { code?: unknown }).code !== '55006' || Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

function fingerprint(migrations: readonly NamedMigration[]): string {
  const hash = createHash('sha256');
  for (const migration of migrations) hash.update(`${migration.name}\n${migration.class.toString()}\n`);
  return hash.digest('hex').slice(0, 16);
}

async function connect(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return client;
}

function databaseUrl(baseUrl: string, database: string): string {
  const url = new URL(baseUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

function quote(identifier: string): string {
  return `"${identifier.replaceAll('"', '""')}"`;
}
