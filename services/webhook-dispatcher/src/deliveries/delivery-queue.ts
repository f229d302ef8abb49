import { randomUUID } from 'node:crypto';
import { newId } from '@agent-platform/kit';
import type { EntityManager } from '@agent-platform/kit/db';
import { parseTraceCarrier, type TraceCarrier } from '@agent-platform/kit/events';
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

/** A delivery this worker holds the lease of, with what sending it needs. */
export interface ClaimedDelivery {
  id: string;
  webhookId: string;
  eventId: string;
  eventType: string;
  payload: string;
  /** The number this attempt will have. */
  attempt: number;
  maxAttempts: number;
  failsEndpoint: boolean;
  url: string;
  secretSealed: string;
  leaseToken: string;
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

/**
 * The durable queue: fan-out inserts, claims and attempt records, in SQL that leans on PostgreSQL
 * for correctness across replicas. Times come from the database clock, so replicas with skewed
 * clocks still agree on what is due and which leases have expired.
 */
export class DeliveryQueue {
  private readonly em: EntityManager;

  /** `em` is the ORM's root manager; every operation runs in its own fork. */
  constructor(em: EntityManager) {
    this.em = em;
  }

  /**
   * One pending delivery per active endpoint of the tenant subscribed to the type (or `*`). The
   * common case — a tenant with no such endpoint — costs one query; otherwise one more statement
   * inserts the deliveries, re-checking that each endpoint is still active, with no transaction
   * held open between the two. The (webhook, event) unique key makes a redelivered event add
   * nothing. Returns how many deliveries were added.
   */
  async fanOut(event: QueuedEvent, maxAttempts: number, firstDelaySeconds: number): Promise<number> {
    const em = this.em.fork();
    const targets = await em.execute<{ id: string }[]>(
      `select "id" from "webhooks" where "tenant_id" = ? and "status" = 'active' and ("events" @> array[?]::text[] or "events" @> array['*']::text[])`,
      [event.tenantId, event.type],
    );
    if (targets.length === 0) return 0;
    const now = new Date().toISOString();
    const trace = event.trace ? JSON.stringify(event.trace) : null;
    const values: unknown[] = [];
    const rows = targets.map((target) => {
      values.push(newId('delivery'), target.id);
      return '(?, ?)';
    });
    const result = await em.execute<{ affectedRows: number }>(
      `insert into "webhook_deliveries" ("id", "tenant_id", "webhook_id", "event_id", "event_type", "event_created_at", "payload",
         "status", "attempts", "max_attempts", "fails_endpoint", "next_attempt_at", "created_at", "updated_at", "trace_context")
       select "new"."id", w."tenant_id", w."id", ?, ?, ?::timestamptz, ?, 'pending', 0, ?, true, now() + make_interval(secs => ?), ?::timestamptz, ?::timestamptz, ?::json
       from (values ${rows.join(', ')}) as "new" ("id", "webhook_id")
       join "webhooks" w on w."id" = "new"."webhook_id" and w."status" = 'active'
       on conflict ("webhook_id", "event_id") do nothing`,
      [event.id, event.type, event.createdAt, event.body, maxAttempts, firstDelaySeconds, now, now, trace, ...values],
      'run',
    );
    return result.affectedRows;
  }

  /**
   * Claims up to `limit` due deliveries, at most one per endpoint and each endpoint's oldest due
   * event first, and leases both the delivery and its endpoint for `leaseMs`. Work is found per
   * endpoint through the queue index (one LIMIT 1 probe each), so a claim costs the same with ten
   * or a hundred thousand deliveries waiting. The endpoint row is locked with SKIP LOCKED and its
   * `lease_until` updated, so a racing replica either skips it or — re-checking the row it waited
   * for — sees the fresh lease: an endpoint never has two attempts in flight.
   */
  async claim(limit: number, leaseMs: number): Promise<ClaimedDelivery[]> {
    const token = randomUUID();
    const rows = await this.em.fork().execute<ClaimRow[]>(
      `with "picked" as (
         select w."id", "head"."id" as "delivery_id"
         from "webhooks" w
         cross join lateral (
           select d."id", d."event_created_at" from "webhook_deliveries" d
           where d."webhook_id" = w."id" and d."status" = 'pending' and d."next_attempt_at" <= now()
           order by d."event_created_at", d."event_id"
           limit 1
         ) "head"
         where w."status" = 'active' and (w."lease_until" is null or w."lease_until" <= now())
         order by "head"."event_created_at"
         limit ?
         for update of w skip locked
       ), "leased_webhooks" as (
         update "webhooks" w set "lease_until" = now() + make_interval(secs => ?)
         from "picked" where w."id" = "picked"."id"
       ), "claimed" as (
         update "webhook_deliveries" d set "locked_until" = now() + make_interval(secs => ?), "lease_token" = ?
         from "picked" where d."id" = "picked"."delivery_id"
         returning d."id", d."webhook_id", d."event_id", d."event_type", d."payload", d."attempts", d."max_attempts", d."fails_endpoint", d."trace_context"::text as "trace_context"
       )
       select "claimed".*, w."url", w."secret_sealed" from "claimed" join "webhooks" w on w."id" = "claimed"."webhook_id"`,
      [limit, leaseMs / 1_000, leaseMs / 1_000, token],
    );
    return rows.map((row) => ({
      id: row.id,
      webhookId: row.webhook_id,
      eventId: row.event_id,
      eventType: row.event_type,
      payload: row.payload,
      attempt: row.attempts + 1,
      maxAttempts: row.max_attempts,
      failsEndpoint: row.fails_endpoint,
      url: row.url,
      secretSealed: row.secret_sealed,
      leaseToken: token,
      trace: parseTraceCarrier(row.trace_context),
    }));
  }

  /**
   * Records the attempt and moves the delivery on (delivered, retry later, or failed — failing the
   * endpoint too when it should), then releases the endpoint's slot: all in one transaction, so a
   * crash either keeps the lease (the attempt is redone after it expires) or records everything.
   * False when the lease was lost meanwhile (expired and taken over, or the endpoint deleted).
   */
  async complete(claimed: ClaimedDelivery, startedAt: Date, result: AttemptResult, plan: RetryPlan, workerId: string): Promise<boolean> {
    const delivered = result.outcome === 'delivered';
    const status = delivered ? 'delivered' : 'retryInSeconds' in plan ? 'pending' : 'failed';
    const retryIn = !delivered && 'retryInSeconds' in plan ? plan.retryInSeconds : null;
    const failEndpoint = status === 'failed' && claimed.failsEndpoint;
    // One statement, so one round trip and one atomic change: the attempt and the endpoint's
    // release happen only if the delivery's lease was still ours.
    const [row] = await this.em.fork().execute<{ recorded: number }[]>(
      `with "updated" as (
         update "webhook_deliveries" set "status" = ?, "attempts" = ?, "response_status" = ?, "response_time_ms" = ?,
           "error" = coalesce(?, "error"), "delivered_at" = case when ? then now() else "delivered_at" end,
           "next_attempt_at" = case when ?::float8 is null then null else now() + make_interval(secs => ?::float8) end,
           "locked_until" = null, "lease_token" = null, "updated_at" = now()
         where "id" = ? and "lease_token" = ?
         returning "id"
       ), "attempt" as (
         insert into "webhook_delivery_attempts" ("delivery_id", "number", "started_at", "response_status", "response_time_ms", "outcome", "error", "worker_id")
         select "id", ?, ?::timestamptz, ?, ?, ?, ?, ? from "updated"
       ), "endpoint" as (
         update "webhooks" set "lease_until" = null,
           "status" = case when ? then 'failed' else "status" end,
           "failed_at" = case when ? and "status" = 'active' then now() else "failed_at" end,
           "updated_at" = case when ? then now() else "updated_at" end
         where "id" = ? and exists (select 1 from "updated")
       )
       select count(*)::int as "recorded" from "updated"`,
      [
        status, claimed.attempt, result.responseStatus, result.responseTimeMs, result.error, delivered, retryIn, retryIn, claimed.id, claimed.leaseToken,
        claimed.attempt, startedAt.toISOString(), result.responseStatus, result.responseTimeMs, result.outcome, result.error, workerId,
        failEndpoint, failEndpoint, failEndpoint, claimed.webhookId,
      ],
    );
    return (row?.recorded ?? 0) > 0;
  }


  /** Gives a claim back unsent (shutdown): the delivery is due again at once, for any replica. */
  async release(claimed: ClaimedDelivery): Promise<void> {
    await this.em.fork().transactional(async (tx) => {
      const updated = await tx.execute<{ affectedRows: number }>(
        `update "webhook_deliveries" set "locked_until" = null, "lease_token" = null where "id" = ? and "lease_token" = ?`,
        [claimed.id, claimed.leaseToken],
        'run',
      );
      if (updated.affectedRows > 0) await tx.execute(`update "webhooks" set "lease_until" = null where "id" = ?`, [claimed.webhookId], 'run');
    });
  }
}
