import { randomUUID } from 'node:crypto';
import { newId } from '@agent-platform/kit';
import { PreparedStatement, type EntityManager } from '@agent-platform/kit/db';
import { parseTraceCarrier, type TraceCarrier } from '@agent-platform/kit/events';
import type { BacklogReading } from '@agent-platform/kit/telemetry';
import { AttemptRecords, type Completion } from './attempt-records.js';
import type { ClaimedDelivery, ClaimedRun } from './claimed.js';
import type { AttemptResult } from './http-sender.js';
import type { RetryPlan } from './retry-schedule.js';

/** An event to fan out, with the exact text that will be sent. */
export interface QueuedEvent {
  id: string;
  tenantId: string;
  type: string;
  /** ISO 8601. */
  createdAt: string;
  body: string;
  /** W3C trace context to continue on every attempt; null starts a new trace per attempt. */
  trace: TraceCarrier | null;
}

interface ClaimRow {
  id: string;
  webhook_id: string;
  event_id: string;
  event_type: string;
  payload: string;
  attempts: number;
  max_attempts: number;
  fails_endpoint: boolean;
  url: string;
  secret_sealed: string;
  trace_context: string | null;
}

// Hot statements, prepared once per pooled connection: MikroORM writes values into the SQL, so
// PostgreSQL would parse and plan every call afresh. Values are cast where PostgreSQL cannot infer
// their type.
const fanOutStatement = new PreparedStatement<{ targets: number; added: string[] }>(
  'webhooks_fan_out',
  `with "events" as (
     select * from jsonb_to_recordset(?::jsonb) as e("n" integer, "id" text, "tenant_id" text, "type" text, "created_at" timestamptz, "body" text, "trace" json)
   ), "targets" as (
     select e.*, w."id" as "webhook_id", row_number() over (order by e."n", w."id")::int as "slot"
     from "events" e join "webhooks" w
       on w."tenant_id" = e."tenant_id" and w."status" = 'active' and (w."events" @> array[e."type"] or w."events" @> array['*']::text[])
   ), "added" as (
     insert into "webhook_deliveries" ("id", "tenant_id", "webhook_id", "event_id", "event_type", "event_created_at", "payload",
       "status", "attempts", "max_attempts", "fails_endpoint", "next_attempt_at", "created_at", "updated_at", "trace_context")
     select ?::jsonb ->> (t."slot" - 1), t."tenant_id", t."webhook_id", t."id", t."type", t."created_at", t."body", 'pending', 0, ?::int, true,
       now() + make_interval(secs => ?::float8), ?::timestamptz, ?::timestamptz, t."trace"
     from "targets" t where t."slot" <= ?::int
     on conflict ("webhook_id", "event_id") do nothing
     returning "webhook_id"
   )
   select (select count(*) from "targets")::int as "targets", array(select distinct "webhook_id" from "added") as "added"`,
);

const claimStatement = new PreparedStatement<ClaimRow>(
  'webhooks_claim_runs',
  `with "picked" as (
     select w."id", "head"."event_created_at"
     from "webhooks" w
     cross join lateral (
       select d."event_created_at" from "webhook_deliveries" d
       where d."webhook_id" = w."id" and d."status" = 'pending' and d."next_attempt_at" <= now()
       order by d."event_created_at", d."event_id"
       limit 1
     ) "head"
     where w."status" = 'active' and (w."lease_until" is null or w."lease_until" <= now())
     order by "head"."event_created_at"
     limit ?::int
     for no key update of w skip locked
   ), "leased" as (
     update "webhooks" w set "lease_until" = now() + make_interval(secs => ?::float8), "lease_token" = ?::text
     from "picked" where w."id" = "picked"."id"
     returning w."id", w."url", w."secret_sealed"
   )
   select d."id", l."id" as "webhook_id", d."event_id", d."event_type", d."payload", d."attempts", d."max_attempts", d."fails_endpoint",
     d."trace_context"::text as "trace_context", l."url", l."secret_sealed"
   from "leased" l
   cross join lateral (
     select * from "webhook_deliveries" d
     where d."webhook_id" = l."id" and d."status" = 'pending' and d."next_attempt_at" <= now()
     order by d."event_created_at", d."event_id"
     limit ?::int
   ) d
   order by l."id", d."event_created_at", d."event_id"`,
);

const backlogStatement = new PreparedStatement<{ due: number; oldest: number }>(
  'webhooks_backlog',
  `select count(*)::int as "due", coalesce(extract(epoch from now() - min(d."next_attempt_at")), 0)::float8 as "oldest"
   from "webhook_deliveries" d join "webhooks" w on w."id" = d."webhook_id"
   where d."status" = 'pending' and d."next_attempt_at" <= now() and w."status" = 'active'`,
);

// Delivery ids made per fan-out statement beyond the expected number: room for a few endpoints more.
const FAN_OUT_SPARE_IDS = 16;

/**
 * The durable queue: fan-out inserts, claims and attempt records, in SQL that leans on PostgreSQL
 * for correctness across replicas. Times come from the database clock, so replicas with skewed
 * clocks still agree on what is due and which leases have expired.
 */
export class DeliveryQueue {
  private readonly em: EntityManager;
  private readonly records: AttemptRecords;
  /** Endpoints per event in the last fan-out: how many ids the next one makes. */
  private targetsPerEvent = 0;

  /** `em` is the ORM's root manager; every operation runs in its own fork. `workerId` signs the attempts recorded. */
  constructor(em: EntityManager, options: { workerId: string }) {
    this.em = em;
    this.records = new AttemptRecords(em, options.workerId);
  }

  /**
   * One pending delivery per active endpoint of each event's tenant subscribed to its type (or
   * `*`), for a run of events in one statement that reads the endpoints and inserts, so the common
   * cases — no such endpoint, or a few — cost one round trip per run. Ids are made here (kit's
   * ULIDs), as many as the last run needed per event plus a few; when the endpoints outnumber them
   * the statement runs again with enough, and the (webhook, event) unique key keeps it from adding
   * twice, as it keeps a redelivered event from adding anything. Returns the endpoints added to.
   */
  async fanOut(events: readonly QueuedEvent[], maxAttempts: number, firstDelaySeconds: number): Promise<string[]> {
    if (events.length === 0) return [];
    const now = new Date().toISOString();
    const rows = JSON.stringify(
      events.map((event, n) => ({ n, id: event.id, tenant_id: event.tenantId, type: event.type, created_at: event.createdAt, body: event.body, trace: event.trace })),
    );
    const added = new Set<string>();
    for (let room = Math.ceil(events.length * this.targetsPerEvent) + FAN_OUT_SPARE_IDS; ; ) {
      const ids = JSON.stringify(Array.from({ length: room }, () => newId('delivery')));
      const [row] = await fanOutStatement.rows(this.em, [rows, ids, maxAttempts, firstDelaySeconds, now, now, room]);
      for (const id of row?.added ?? []) added.add(id);
      const targets = row?.targets ?? 0;
      this.targetsPerEvent = targets / events.length;
      if (targets <= room) return [...added];
      room = targets;
    }
  }

  /**
   * Leases up to `limit` endpoints with due deliveries, each endpoint's oldest due event first,
   * together with up to `runLength` of its due deliveries (oldest first), for `leaseMs`. Work is
   * found per endpoint through the queue index (LIMIT probes), so a claim costs the same with ten
   * or a hundred thousand deliveries waiting. The endpoint row is locked with SKIP LOCKED and its
   * `lease_until` and `lease_token` set, so a racing replica either skips it or sees the fresh
   * lease: an endpoint never has two attempts in flight, and its run is sent in order. The
   * deliveries are only read: the endpoint's token fences every record of the run.
   */
  /** Deliveries due now to active endpoints, whether or not a worker holds their endpoint (the depth KEDA scales on). */
  async backlog(): Promise<BacklogReading> {
    const [row] = await backlogStatement.rows(this.em.fork(), []);
    return { due: row?.due ?? 0, oldestSeconds: row?.oldest ?? 0 };
  }

  async claim(limit: number, runLength: number, leaseMs: number): Promise<ClaimedRun[]> {
    const token = randomUUID();
    const claimedAt = performance.now();
    const rows = await claimStatement.rows(this.em, [limit, leaseMs / 1_000, token, runLength]);
    const runs = new Map<string, ClaimedRun>();
    for (const row of rows) {
      let run = runs.get(row.webhook_id);
      if (!run) {
        run = { webhookId: row.webhook_id, url: row.url, secretSealed: row.secret_sealed, leaseToken: token, claimedAt, deliveries: [] };
        runs.set(row.webhook_id, run);
      }
      run.deliveries.push({
        id: row.id,
        webhookId: row.webhook_id,
        eventId: row.event_id,
        eventType: row.event_type,
        payload: row.payload,
        attempt: row.attempts + 1,
        maxAttempts: row.max_attempts,
        failsEndpoint: row.fails_endpoint,
        trace: parseTraceCarrier(row.trace_context),
      });
    }
    return [...runs.values()];
  }

  /** See AttemptRecords.complete. */
  complete(run: ClaimedRun, delivery: ClaimedDelivery, startedAt: Date, result: AttemptResult, plan: RetryPlan, endRun: boolean): Promise<Completion> {
    return this.records.complete(run, delivery, startedAt, result, plan, endRun);
  }

  /**
   * Hands the endpoint back with the run's unsent deliveries (shutdown, or a run cut short): they
   * are due again at once, for any replica — if the lease was still ours.
   */
  async release(run: ClaimedRun): Promise<void> {
    await this.em
      .fork()
      .execute(`update "webhooks" set "lease_until" = null, "lease_token" = null where "id" = ? and "lease_token" = ?`, [run.webhookId, run.leaseToken], 'run');
  }
}
