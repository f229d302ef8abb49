import { PreparedStatement, type EntityManager } from '@agent-platform/kit/db';
import { Batcher } from '@agent-platform/kit/work';
import type { ClaimedDelivery, ClaimedRun } from './claimed.js';
import type { AttemptResult } from './http-sender.js';
import type { RetryPlan } from './retry-schedule.js';

/** What recording an attempt found. */
export interface Completion {
  /** False when the lease was lost meanwhile (expired and taken over, or the endpoint deleted). */
  recorded: boolean;
  /** The endpoint is still active with the URL and secret the run was claimed with. */
  endpointUnchanged: boolean;
}

/** One attempt's record, in the shape `jsonb_to_recordset` reads. */
interface CompletionRow {
  id: string;
  lease_token: string;
  webhook_id: string;
  status: 'delivered' | 'pending' | 'failed';
  attempt: number;
  started_at: string;
  outcome: AttemptResult['outcome'];
  response_status: number;
  response_time_ms: number;
  error: string | null;
  /** Seconds until the next attempt; null when none follows. */
  retry_in: number | null;
  fail_endpoint: boolean;
  /** The run ends here: the endpoint's lease and the rest of the run's deliveries are handed back. */
  release_endpoint: boolean;
  url: string;
  secret_sealed: string;
}

// Prepared once per pooled connection, like DeliveryQueue's hot statements.
const completionStatement = new PreparedStatement<{ id: string; endpoint_unchanged: boolean }>(
  'webhooks_record_attempts',
  `with "rows" as (
     select * from jsonb_to_recordset(?::jsonb) as r("id" text, "lease_token" text, "webhook_id" text, "status" text, "attempt" integer,
       "started_at" timestamptz, "outcome" text, "response_status" integer, "response_time_ms" integer, "error" text, "retry_in" float8,
       "fail_endpoint" boolean, "release_endpoint" boolean, "url" text, "secret_sealed" text)
   ), "held" as (
     select r.* from "rows" r join "webhooks" w on w."id" = r."webhook_id" and w."lease_token" = r."lease_token"
   ), "updated" as (
     update "webhook_deliveries" d set "status" = r."status", "attempts" = r."attempt", "response_status" = r."response_status",
       "response_time_ms" = r."response_time_ms", "error" = coalesce(r."error", d."error"),
       "delivered_at" = case when r."status" = 'delivered' then now() else d."delivered_at" end,
       "next_attempt_at" = case when r."retry_in" is null then null else now() + make_interval(secs => r."retry_in") end,
       "updated_at" = now()
     from "held" r
     where d."id" = r."id" and d."status" = 'pending' and d."attempts" = r."attempt" - 1
     returning d."id"
   ), "recorded" as (
     select r.* from "rows" r join "updated" u on u."id" = r."id"
   ), "attempt" as (
     insert into "webhook_delivery_attempts" ("delivery_id", "number", "started_at", "response_status", "response_time_ms", "outcome", "error", "worker_id")
     select "id", "attempt", "started_at", "response_status", "response_time_ms", "outcome", "error", ?::text from "recorded"
   ), "ends" as (
     select "webhook_id", bool_or("fail_endpoint") as "fail", bool_or("release_endpoint") as "release"
     from "recorded" where "fail_endpoint" or "release_endpoint" group by "webhook_id"
   ), "endpoint" as (
     update "webhooks" w set "lease_until" = case when e."release" then null else w."lease_until" end,
       "lease_token" = case when e."release" then null else w."lease_token" end,
       "status" = case when e."fail" then 'failed' else w."status" end,
       "failed_at" = case when e."fail" and w."status" = 'active' then now() else w."failed_at" end,
       "updated_at" = case when e."fail" then now() else w."updated_at" end
     from "ends" e where w."id" = e."webhook_id"
   )
   select r."id", coalesce(w."status" = 'active' and w."url" = r."url" and w."secret_sealed" = r."secret_sealed", false) as "endpoint_unchanged"
   from "recorded" r left join "webhooks" w on w."id" = r."webhook_id"`,
);

// Bounds one statement's parameter text; far above what `concurrency` runs produce at once.
const MAX_COMPLETION_BATCH = 500;

/**
 * Attempt records, group-committed: what arrives while a statement is written goes together in
 * the next one (kit's Batcher), one `jsonb_to_recordset` statement for many deliveries.
 */
export class AttemptRecords {
  private readonly em: EntityManager;
  private readonly workerId: string;
  private readonly completions: Batcher<CompletionRow, Completion>;

  /** `workerId` signs the attempts recorded. */
  constructor(em: EntityManager, workerId: string) {
    this.em = em;
    this.workerId = workerId;
    this.completions = new Batcher((batch) => this.writeCompletions(batch), { maxBatch: MAX_COMPLETION_BATCH });
  }

  /**
   * Records the attempt and moves the delivery on (delivered, retry later, or failed — failing the
   * endpoint too when it should); with `endRun`, also hands back the endpoint and the run's unsent
   * deliveries. One atomic statement, so a crash either keeps the lease (the attempt is redone after
   * it expires) or records everything. Completions arriving while one is written go together in the
   * next statement (group commit).
   */
  complete(run: ClaimedRun, delivery: ClaimedDelivery, startedAt: Date, result: AttemptResult, plan: RetryPlan, endRun: boolean): Promise<Completion> {
    const delivered = result.outcome === 'delivered';
    const retryIn = !delivered && 'retryInSeconds' in plan ? plan.retryInSeconds : null;
    const status = delivered ? 'delivered' : retryIn === null ? 'failed' : 'pending';
    return this.completions.submit({
      id: delivery.id,
      lease_token: run.leaseToken,
      webhook_id: delivery.webhookId,
      status,
      attempt: delivery.attempt,
      started_at: startedAt.toISOString(),
      outcome: result.outcome,
      response_status: result.responseStatus,
      response_time_ms: result.responseTimeMs,
      // jsonb (and a text column) cannot hold NUL; one such message must not sink its whole batch.
      error: result.error?.replaceAll('\0', '') ?? null,
      retry_in: retryIn,
      fail_endpoint: status === 'failed' && delivery.failsEndpoint,
      release_endpoint: endRun,
      url: run.url,
      secret_sealed: run.secretSealed,
    });
  }

  /**
   * One statement for a batch of completions. Only deliveries whose endpoint's lease is still ours
   * change, and each only from the attempt it awaits, so a record applies once even where a run
   * that outlived its lease overlaps the next holder's. A run's records trail its sends, so one
   * endpoint may have several in a batch (never its run's end, which waits for the others): its
   * row is updated from one row per endpoint, grouped, since an UPDATE … FROM applies one
   * arbitrary source row per target.
   */
  private async writeCompletions(batch: readonly CompletionRow[]): Promise<Completion[]> {
    const answered = await completionStatement.rows(this.em, [JSON.stringify(batch), this.workerId]);
    const byId = new Map(answered.map((row) => [row.id, row.endpoint_unchanged]));
    return batch.map((row) => ({ recorded: byId.has(row.id), endpointUnchanged: byId.get(row.id) ?? false }));
  }
}
