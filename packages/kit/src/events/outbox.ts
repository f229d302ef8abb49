import { defineEntity, p, type EntityManager } from '@mikro-orm/postgresql';
import { eventSubject, type EventEnvelope } from './envelope.js';

/**
 * The transactional outbox: an event is a row written in the same transaction as the state change
 * it reports. A relay publishes unpublished rows (oldest first) and stamps `published_at`.
 */
export const OutboxSchema = defineEntity({
  name: 'OutboxMessage',
  tableName: 'outbox',
  properties: {
    id: p.string().primary(),
    subject: p.string(),
    payload: p.json<EventEnvelope<object>>(),
    createdAt: p.datetime(),
    publishedAt: p.datetime().strictNullable(),
  },
});

export class OutboxMessage extends OutboxSchema.class {}
OutboxSchema.setClass(OutboxMessage);

/**
 * Writes the event into the outbox through `em`, inside whatever transaction `em` is in. Call it
 * from within `em.transactional(...)` so the event commits or rolls back with the change.
 */
export async function recordEvent(em: EntityManager, envelope: EventEnvelope<object>): Promise<void> {
  await em.insert(OutboxMessage, {
    id: envelope.id,
    subject: eventSubject(envelope),
    payload: envelope,
    createdAt: new Date(envelope.created_at),
    publishedAt: null,
  });
}

/**
 * DDL of the outbox table, for each service's own migration (a service owns its database). The
 * partial index serves the relay's "oldest unpublished first" scan and stays small.
 */
export const OUTBOX_TABLE_SQL: readonly string[] = [
  `create table "outbox" (
    "id" text primary key,
    "subject" text not null,
    "payload" jsonb not null,
    "created_at" timestamptz not null default now(),
    "published_at" timestamptz null
  )`,
  `create index "outbox_unpublished_idx" on "outbox" ("created_at", "id") where "published_at" is null`,
];
