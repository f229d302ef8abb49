import { createHash } from 'node:crypto';
import { Migration } from '@mikro-orm/migrations';
import { defineEntity, p } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DomainError } from '../errors.js';
import { newEvent, OUTBOX_TABLE_SQL, OutboxMessage, OutboxSchema, recordEvent } from '../events/index.js';
import { createLogger } from '../logger.js';
import { createTestDatabase, type TestDatabase } from '../testing/index.js';
import { classifyDbError } from './errors.js';
import { initOrm, requestContext, type NamedMigration } from './orm.js';
import { PreparedStatement } from './prepared-statement.js';

const NoteSchema = defineEntity({
  name: 'Note',
  tableName: 'notes',
  properties: { id: p.string().primary(), body: p.string() },
});
class Note extends NoteSchema.class {}
NoteSchema.setClass(Note);

class CreateNotes extends Migration {
  override up(): void {
    this.addSql('create table "notes" ("id" text primary key, "body" text not null)');
    for (const sql of OUTBOX_TABLE_SQL) this.addSql(sql);
  }
}

// The DDL's hash in the name: the test template is rebuilt when OUTBOX_TABLE_SQL changes.
const ddlHash = createHash('sha256').update(OUTBOX_TABLE_SQL.join('\n')).digest('hex').slice(0, 12);
const migrations: NamedMigration[] = [{ name: `0001_notes_${ddlHash}`, class: CreateNotes }];
const entities = [NoteSchema, OutboxSchema];
const logger = createLogger({ service: 'kit-test', level: 'silent' });

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase({
    name: 'kit_db',
    migrations,
    migrate: async (url) => {
      const orm = await initOrm({ clientUrl: url, entities, migrations, logger });
      await orm.close();
    },
  });
});

afterAll(async () => {
  await database.drop();
});

describe('initOrm', () => {
  it('gives a migrated database and does not re-apply migrations, even from racing replicas', async () => {
    const orms = await Promise.all([1, 2, 3].map(() => initOrm({ clientUrl: database.url, entities, migrations, logger })));
    try {
      const applied = await database.query<{ name: string }>('select name from mikro_orm_migrations');
      expect(applied.map((row) => row.name)).toEqual(migrations.map((migration) => migration.name));
      const em = orms[0]!.em.fork();
      em.create(Note, { id: 'n1', body: 'hello' });
      await em.flush();
      expect(await orms[1]!.em.fork().findOneOrFail(Note, 'n1')).toMatchObject({ body: 'hello' });
    } finally {
      await Promise.all(orms.map((orm) => orm.close()));
    }
  });
});

describe('recordEvent', () => {
  it('commits the outbox row with the transaction and rolls it back with it', async () => {
    const orm = await initOrm({ clientUrl: database.url, entities, migrations, logger });
    try {
      const committed = newEvent('note.created', 'tnt_01', { note_id: 'n2' });
      await orm.em.fork().transactional(async (em) => {
        em.create(Note, { id: 'n2', body: 'kept' });
        await recordEvent(em, committed);
      });
      const rolledBack = newEvent('note.created', 'tnt_01', { note_id: 'n3' });
      await expect(
        orm.em.fork().transactional(async (em) => {
          await recordEvent(em, rolledBack);
          throw new Error('abort');
        }),
      ).rejects.toThrow('abort');

      const rows = await database.query<{ id: string; subject: string; payload: unknown; published_at: Date | null }>(
        'select id, subject, payload, published_at from outbox where id = any($1)',
        [[committed.id, rolledBack.id]],
      );
      expect(rows).toEqual([{ id: committed.id, subject: 'events.tnt_01.note.created', payload: committed, published_at: null }]);
      expect(await orm.em.fork().count(OutboxMessage, { publishedAt: null })).toBeGreaterThanOrEqual(1);
    } finally {
      await orm.close();
    }
  });
});

describe('classifyDbError', () => {
  it('turns a lost connection into service_unavailable, and the pool recovers its slot', async () => {
    // A short grace, and a pool wait that outlasts it: the query below waits for the slot to come back.
    const orm = await initOrm({ clientUrl: database.url, entities, migrations, logger, poolMax: 1, connectTimeoutMs: 2_000, deadClientGraceMs: 50 });
    try {
      const em = orm.em.fork();
      const failure = em.transactional(async (tx) => {
        await tx.execute('select 1');
        await database.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [database.name]);
        await tx.execute('select 1');
      });
      const error: unknown = await failure.catch((e: unknown) => e);
      const classified = classifyDbError(error);
      expect(classified).toBeInstanceOf(DomainError);
      expect(classified?.code).toBe('service_unavailable');
      // The dead transaction's connection must not stay checked out: the only slot comes back.
      await orm.em.fork().execute('select 1');
    } finally {
      await orm.close(true);
    }
  });

  it('turns a pool wait time-out into service_unavailable', async () => {
    const orm = await initOrm({ clientUrl: database.url, entities, migrations, logger, poolMax: 1, connectTimeoutMs: 200 });
    try {
      let release!: () => void;
      let holding!: () => void;
      const connectionTaken = new Promise<void>((resolve) => (holding = resolve));
      const held = orm.em.fork().transactional(async (tx) => {
        await tx.execute('select 1');
        holding();
        await new Promise<void>((resolve) => (release = resolve));
      });
      // The transaction has the pool's only connection.
      await connectionTaken;
      const error: unknown = await orm.em.fork().execute('select 1').catch((e: unknown) => e);
      release();
      await held;
      expect(classifyDbError(error)?.code).toBe('service_unavailable');
    } finally {
      await orm.close(true);
    }
  });

  it('leaves other database errors alone', async () => {
    const orm = await initOrm({ clientUrl: database.url, entities, migrations, logger });
    try {
      const error: unknown = await orm.em.fork().execute('select * from no_such_table').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Error);
      expect(classifyDbError(error)).toBeUndefined();
    } finally {
      await orm.close();
    }
  });
});

describe('requestContext', () => {
  it('gives each call a fork of its own, made only when the call first uses the EntityManager', async () => {
    const orm = await initOrm({ clientUrl: database.url, entities, migrations, logger });
    const around = requestContext(orm);
    try {
      await orm.em.fork().insert(Note, { id: 'n6', body: 'seen by both' });
      const forks = vi.spyOn(orm.em, 'fork');
      const identityMaps = await Promise.all(
        [1, 2].map(() =>
          around(async () => {
            const note = await orm.em.findOneOrFail(Note, 'n6');
            // The same call finds the same object; the other call has its own.
            expect(await orm.em.findOneOrFail(Note, 'n6')).toBe(note);
            return note;
          }),
        ),
      );
      expect(identityMaps[0]).not.toBe(identityMaps[1]);
      expect(forks).toHaveBeenCalledTimes(2);
      // A call that only runs a prepared read makes no fork.
      const noteById = new PreparedStatement<{ body: string }>('kit_test_note_body', 'select "body" from "notes" where "id" = ?');
      expect(await around(() => noteById.rows(orm.em, ['n6']))).toEqual([{ body: 'seen by both' }]);
      expect(forks).toHaveBeenCalledTimes(2);
      // Outside a call the global EntityManager is refused, as MikroORM's own context does.
      await expect(orm.em.findOne(Note, 'n6')).rejects.toThrow(/global EntityManager/);
    } finally {
      await orm.close();
    }
  });

  it('answers a prepared read inside a transaction from that transaction, with or without the call\'s fork', async () => {
    const orm = await initOrm({ clientUrl: database.url, entities, migrations, logger });
    const noteById = new PreparedStatement<{ body: string }>('kit_test_note_body', 'select "body" from "notes" where "id" = ?');
    const onCallFork = () => orm.em;
    // A fork of its own: the call's fork is never made, yet the global EntityManager is in the transaction.
    const onOwnFork = () => orm.em.fork({ disableContextResolution: true });
    try {
      for (const [index, transactionOn] of [onCallFork, onOwnFork].entries()) {
        const id = `n7-${index}`;
        const seen = await requestContext(orm)(() =>
          transactionOn().transactional(async (tx) => {
            tx.create(Note, { id, body: 'in the transaction' });
            await tx.flush();
            const inside = await noteById.rows(orm.em, [id]);
            throw Object.assign(new Error('roll back'), { inside });
          }).catch((error: unknown) => (error as { inside: unknown }).inside),
        );
        expect(seen).toEqual([{ body: 'in the transaction' }]);
        expect(await noteById.rows(orm.em, [id])).toEqual([]);
      }
    } finally {
      await orm.close();
    }
  });
});

describe('PreparedStatement', () => {
  const noteById = new PreparedStatement<{ id: string; body: string }>('kit_test_note_by_id', 'select "id", "body" from "notes" where "id" = ?');

  it('is prepared once on the connection and binds its values rather than writing them into the SQL', async () => {
    const orm = await initOrm({ clientUrl: database.url, entities, migrations, logger, poolMax: 1 });
    try {
      const em = orm.em.fork();
      em.create(Note, { id: "n'4?", body: 'quoted' });
      await em.flush();
      expect(await noteById.rows(orm.em, ["n'4?"])).toEqual([{ id: "n'4?", body: 'quoted' }]);
      expect(await noteById.rows(orm.em, ['missing'])).toEqual([]);
      // The pool's only connection holds the statement, so the next call skips parsing and planning.
      const statements = new PreparedStatement<{ name: string }>('kit_test_statements', 'select "name" from pg_prepared_statements where "name" = ?');
      expect(await statements.rows(orm.em, ['kit_test_note_by_id'])).toEqual([{ name: 'kit_test_note_by_id' }]);
    } finally {
      await orm.close();
    }
  });

  it("reads the transaction's own writes inside a transaction", async () => {
    const orm = await initOrm({ clientUrl: database.url, entities, migrations, logger });
    try {
      const seen = await orm.em.fork().transactional(async (em) => {
        em.create(Note, { id: 'n5', body: 'not committed yet' });
        await em.flush();
        const rows = await noteById.rows(em, ['n5']);
        throw Object.assign(new Error('roll back'), { rows });
      }).catch((error: unknown) => (error as { rows: unknown }).rows);
      expect(seen).toEqual([{ id: 'n5', body: 'not committed yet' }]);
      expect(await noteById.rows(orm.em, ['n5'])).toEqual([]);
    } finally {
      await orm.close();
    }
  });

  it('refuses one name for two statements', () => {
    expect(() => new PreparedStatement('kit_test_note_by_id', 'select 1')).toThrow(/defined twice/);
  });
});
