import { createHash } from 'node:crypto';
import { Migration } from '@mikro-orm/migrations';
import type { Orm } from '../../src/db/orm.js';
import { initOrm, type NamedMigration } from '../../src/db/orm.js';
import type { Logger } from '../../src/logger.js';
import { createTestDatabase, type TestDatabase } from '../../src/testing/database.js';
import type { EventBus, EventConsumer, OutgoingEvent, Subscription } from '../../src/events/bus.js';
import { newEvent, type EventEnvelope } from '../../src/events/envelope.js';
import { OUTBOX_TABLE_SQL, OutboxSchema, recordEvent } from '../../src/events/outbox.js';

// Test support for the relay's tests: an outbox-only database and a bus whose answers a test controls.

class CreateOutbox extends Migration {
  override up(): void {
    for (const sql of OUTBOX_TABLE_SQL) this.addSql(sql);
  }
}

// The DDL's hash in the name: the test template is rebuilt when OUTBOX_TABLE_SQL changes.
const ddlHash = createHash('sha256').update(OUTBOX_TABLE_SQL.join('\n')).digest('hex').slice(0, 12);
const migrations: NamedMigration[] = [{ name: `0001_outbox_${ddlHash}`, class: CreateOutbox }];

export function openOutboxOrm(url: string, logger: Logger): Promise<Orm> {
  return initOrm({ clientUrl: url, entities: [OutboxSchema], migrations, logger });
}

/** A fresh database with only the outbox table (and its trigger), cloned from a template. */
export function createOutboxDatabase(logger: Logger): Promise<TestDatabase> {
  return createTestDatabase({
    name: 'kit_outbox',
    migrations,
    migrate: async (url) => {
      const orm = await openOutboxOrm(url, logger);
      await orm.close();
    },
  });
}

/** The `created_at` of the last event written, in ms: each next one is stamped at least 1 ms later. */
let lastCreatedAt = 0;

/**
 * Commits `count` events, one transaction each, as a service would, each stamped (`created_at`,
 * millisecond precision) at least a millisecond after the one before, so the order the relay must
 * keep is unambiguous. Returns them in that order.
 */
export async function writeEvents(orm: Orm, count: number, tenantId = 'tnt_relay'): Promise<EventEnvelope<object>[]> {
  const written: EventEnvelope<object>[] = [];
  for (let i = 0; i < count; i += 1) {
    lastCreatedAt = Math.max(Date.now(), lastCreatedAt + 1);
    const event = newEvent('note.created', tenantId, { index: i, note: { title: `n${i}`, body: 'b' } }, new Date(lastCreatedAt));
    await orm.em.fork().transactional((em) => recordEvent(em, event));
    written.push(event);
  }
  return written;
}

/** What a RecordingBus accepted, with the time it did. */
export interface Accepted {
  envelope: EventEnvelope<object>;
  json: string;
  at: number;
}

/** An EventBus that records what it accepts; `rejectWhile` makes it refuse, as NATS away would. */
export class RecordingBus implements EventBus {
  readonly system = 'in-process';
  readonly accepted: Accepted[] = [];
  attempts = 0;
  rejectWhile: () => boolean = () => false;
  /** A publish that never settles, to test bounded stops. */
  hang = false;

  publish(envelope: EventEnvelope<object>, json = JSON.stringify(envelope)): Promise<void> {
    this.attempts += 1;
    if (this.hang) return new Promise(() => undefined);
    if (this.rejectWhile()) return Promise.reject(new Error('bus unavailable (test)'));
    this.accepted.push({ envelope, json, at: Date.now() });
    return Promise.resolve();
  }

  /** The size of each run handed to publishAll. */
  readonly runs: number[] = [];

  /** Records one at a time, stopping at the first refusal, as NATS does. */
  async publishAll(events: readonly OutgoingEvent[]): Promise<void> {
    this.runs.push(events.length);
    for (const event of events) await this.publish(event.envelope, event.json);
  }

  ids(): string[] {
    return this.accepted.map((entry) => entry.envelope.id);
  }

  subscribe(_consumer: EventConsumer): Promise<Subscription> {
    return Promise.reject(new Error('RecordingBus only records publishes.'));
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
