import { randomBytes } from 'node:crypto';
import { Migration } from '@mikro-orm/migrations';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import type { NamedMigration } from '../db/orm.js';
import { createTestDatabase, DEFAULT_TEST_DATABASE_URL, type TestDatabase } from './database.js';

class CreateThings extends Migration {
  override up(): void {
    this.addSql('create table things (id int primary key)');
  }
}

class AddColour extends Migration {
  override up(): void {
    this.addSql('alter table things add column colour text');
  }
}

const baseUrl = process.env.TEST_DATABASE_URL ?? DEFAULT_TEST_DATABASE_URL;

/** Applies the migrations with plain SQL, counting how often a template gets built. */
function migrator(migrations: readonly NamedMigration[]) {
  const calls: string[] = [];
  const migrate = async (url: string) => {
    calls.push(url);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      if (migrations.some((m) => m.name.startsWith('0001'))) await client.query('create table things (id int primary key)');
      if (migrations.some((m) => m.name.startsWith('0002'))) await client.query('alter table things add column colour text');
    } finally {
      await client.end();
    }
  };
  return { calls, migrate };
}

async function databaseNames(like: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: baseUrl });
  await client.connect();
  try {
    const result = await client.query<{ datname: string }>('select datname from pg_database where datname like $1 order by datname', [like]);
    return result.rows.map((row) => row.datname);
  } finally {
    await client.end();
  }
}

// A prefix of its own, so this file's templates never meet another file's.
const name = `kitfx${randomBytes(3).toString('hex')}`;
const created: TestDatabase[] = [];

afterAll(async () => {
  await Promise.all(created.map((database) => database.drop()));
  const client = new pg.Client({ connectionString: baseUrl });
  await client.connect();
  try {
    for (const template of await databaseNames(`${name}%`)) await client.query(`drop database if exists "${template}" with (force)`);
  } finally {
    await client.end();
  }
});

describe('createTestDatabase', () => {
  const first: NamedMigration[] = [{ name: '0001_things', class: CreateThings }];

  it('clones fresh databases from one migrated template, built once even by racing callers', async () => {
    const { calls, migrate } = migrator(first);
    const databases = await Promise.all([1, 2, 3].map(() => createTestDatabase({ name, migrations: first, migrate, baseUrl })));
    created.push(...databases);
    expect(calls).toHaveLength(1);
    expect(new Set(databases.map((d) => d.name)).size).toBe(3);
    expect(new Set(databases.map((d) => d.template)).size).toBe(1);

    await databases[0]!.query('insert into things (id) values (1)');
    expect(await databases[0]!.query('select id from things')).toEqual([{ id: 1 }]);
    expect(await databases[1]!.query('select id from things')).toEqual([]);

    const again = await createTestDatabase({ name, migrations: first, migrate, baseUrl });
    created.push(again);
    expect(calls).toHaveLength(1);
    expect(again.template).toBe(databases[0]!.template);
  });

  it('rebuilds the template when the migrations change, and drops the old one once it is stale', async () => {
    const before = await createTestDatabase({ name, migrations: first, migrate: migrator(first).migrate, baseUrl });
    created.push(before);
    const second: NamedMigration[] = [...first, { name: '0002_colour', class: AddColour }];
    const { calls, migrate } = migrator(second);
    const after = await createTestDatabase({ name, migrations: second, migrate, baseUrl });
    created.push(after);
    expect(calls).toHaveLength(1);
    expect(after.template).not.toBe(before.template);
    await after.query("insert into things (id, colour) values (1, 'red')");
    // Another work tree may still be cloning the first set's template.
    expect(await databaseNames(before.template)).toEqual([before.template]);

    const client = new pg.Client({ connectionString: baseUrl });
    await client.connect();
    try {
      const sevenHoursAgo = Date.now() - 7 * 60 * 60 * 1_000;
      await client.query(`comment on database "${before.template}" is '${sevenHoursAgo}'`);
    } finally {
      await client.end();
    }
    const third: NamedMigration[] = [{ name: '0001_things_again', class: CreateThings }];
    created.push(await createTestDatabase({ name, migrations: third, migrate: migrator(third).migrate, baseUrl }));
    expect(await databaseNames(before.template)).toEqual([]);
    expect(await databaseNames(after.template)).toEqual([after.template]);
  });

  it('drops the database, even with connections still open', async () => {
    const database = await createTestDatabase({ name, migrations: first, migrate: migrator(first).migrate, baseUrl });
    await database.query('select 1');
    const holder = new pg.Client({ connectionString: database.url });
    await holder.connect();
    holder.on('error', () => undefined);
    await database.drop();
    expect(await databaseNames(database.name)).toEqual([]);
    await holder.end().catch(() => undefined);
  });
});
