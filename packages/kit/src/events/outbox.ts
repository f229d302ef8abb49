import { defineEntity, p, type EntityManager } from '@mikro-orm/postgresql';
import { eventSubject, type EventEnvelope } from './envelope.js';
import { captureTraceContext, type TraceCarrier } from './trace-context.js';

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
    // A `json` column keeps the text as written (jsonb would reorder the keys): the relay
    // publishes exactly these characters, so webhooks receive the envelope in its own order.
    payload: p.json<EventEnvelope<object>>().columnType('json'),
    /** W3C trace context of the recording request; the relay publishes it beside the event. */
    traceContext: p.json<TraceCarrier>().columnType('json').strictNullable(),
    createdAt: p.datetime(),
    publishedAt: p.datetime().strictNullable(),
  },
});

export class OutboxMessage extends OutboxSchema.class {}
OutboxSchema.setClass(OutboxMessage);

/**
 * Writes the event into the outbox through `em`, inside whatever transaction `em` is in. Call it
 * from within `em.transactional(...)` so the event commits or rolls back with the change. The
 * active trace context is kept with it, so consumers continue the trace of the request.
 */
export async function recordEvent(em: EntityManager, envelope: EventEnvelope<object>): Promise<void> {
  await em.insert(OutboxMessage, {
    id: envelope.id,
    subject: eventSubject(envelope),
    payload: envelope,
    traceContext: captureTraceContext(),
    createdAt: new Date(envelope.created_at),
    publishedAt: null,
  });
}

/** The channel the outbox trigger notifies on commit; the relay LISTENs to it. */
export const OUTBOX_NOTIFY_CHANNEL = 'outbox_inserted';

/**
 * A statement-level trigger that NOTIFYs the relay when rows are inserted. PostgreSQL delivers the
 * notification at commit (and folds duplicates within a transaction), so the relay wakes within
 * milliseconds of a commit instead of at its next poll.
 */
export const OUTBOX_NOTIFY_SQL: readonly string[] = [
  `create or replace function "outbox_notify"() returns trigger language plpgsql as $$
  begin
    perform pg_notify('${OUTBOX_NOTIFY_CHANNEL}', '');
    return null;
  end
  $$`,
  `drop trigger if exists "outbox_notify" on "outbox"`,
  `create trigger "outbox_notify" after insert on "outbox" for each statement execute function "outbox_notify"()`,
];

/**
 * DDL of the outbox table, for each service's own migration (a service owns its database). The
 * partial index serves the relay's "oldest unpublished first" scan and stays small.
 */
export const OUTBOX_TABLE_SQL: readonly string[] = [
  `create table "outbox" (
    "id" text primary key,
    "subject" text not null,
    "payload" json not null,
    "trace_context" json null,
    "created_at" timestamptz not null default now(),
    "published_at" timestamptz null
  )`,
  `create index "outbox_unpublished_idx" on "outbox" ("created_at", "id") where "published_at" is null`,
  ...OUTBOX_NOTIFY_SQL,
];
