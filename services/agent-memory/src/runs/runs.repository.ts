import { LEASED_TRIGGERS, type Actor, type CursorPage, type RunStatus, type RunTrigger } from '@agent-platform/kit';
import type { EntityManager } from '@agent-platform/kit/db';
import type { Usage } from '../models/chat-model.js';
import type { NewRunStep } from './run-steps.js';
import { Run, RunStepRow, type BackgroundRequest, type RunFeedback } from './runs.entity.js';

/** The channel a run's progress is told on, at the commit that stores it: watchers read it then. */
export const RUN_PROGRESS_CHANNEL = 'run_progress';

/** LEASED_TRIGGERS as an SQL list, as the partial index over due runs (0017_evals) names them. */
export const LEASED_TRIGGERS_SQL = LEASED_TRIGGERS.map((trigger) => `'${trigger}'`).join(', ');

/** A run as it begins. */
export interface NewRun {
  id: string;
  tenantId: string;
  agentId: string;
  agentVersion: number;
  sessionId: string | null;
  userId: string | null;
  trigger: RunTrigger;
  status: Extract<RunStatus, 'queued' | 'running'>;
  input: string;
  parentRunId: string | null;
  traceId: string | null;
  messageId: string | null;
  startedAt: Date;
  /** Background runs: as whom it acts, and what it was asked for. */
  actor?: Actor;
  request?: BackgroundRequest;
}


/** Where a run got to: still waiting for a decision, or ended. */
export interface RunProgress {
  status: Exclude<RunStatus, 'queued'>;
  output: string | null;
  usage: Usage;
  credits: number;
  error: { code: string; message: string } | null;
  /** Set when the run ended: its duration is counted from its start to this. */
  completedAt: Date | null;
  /** A new session that was never stored is not named. */
  sessionId: string | null;
}

/**
 * A list's `total` counts matching runs up to this many: an agent's runs grow by the hundred
 * thousand, and an exact count of them would cost every page more than the page itself.
 */
export const RUNS_TOTAL_CAP = 10_000;

/** decisions §16: the list's filters. */
export interface RunFilter {
  status: RunStatus | undefined;
  trigger: RunTrigger | undefined;
  userId: string | undefined;
  sessionId: string | undefined;
  since: Date | undefined;
  until: Date | undefined;
  minDurationMs: number | undefined;
}

/** decisions §16: an agent's runs over a time range, summed. */
export interface RunStats {
  runs: number;
  completed: number;
  failed: number;
  /** failed ÷ ended (completed, failed, cancelled); 0 when none ended. */
  failureRate: number;
  /** Over ended runs; null when none ended. */
  p50DurationMs: number | null;
  p95DurationMs: number | null;
  usage: Usage;
  credits: number;
  /** Mean feedback score; null when no run has any. */
  feedbackMean: number | null;
  feedbackCount: number;
}

interface StatsRow {
  runs: number;
  completed: number;
  failed: number;
  ended: number;
  p50: number | null;
  p95: number | null;
  prompt_tokens: string;
  completion_tokens: string;
  total_tokens: string;
  credits: string;
  feedback_mean: number | null;
  feedback_count: number;
}

/** Runs and their steps. Every read takes the tenant id. */
export class RunsRepository {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  /**
   * Stores a run that begins, with its first steps, in one statement. False when its agent is gone
   * (deleted meanwhile, or another tenant's).
   */
  async start(run: NewRun, steps: readonly NewRunStep[]): Promise<boolean> {
    const rows = await this.em.execute<{ id: string }[]>(
      `with "run" as (
         insert into "runs" ("id", "tenant_id", "agent_id", "agent_version", "session_id", "user_id", "trigger", "status", "input", "parent_run_id", "trace_id", "message_id", "started_at", "actor", "request")
         select ?, ?, "id", ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb, ?::jsonb from "agents" where "id" = ? and "tenant_id" = ? returning "id"
       ), "steps" as (
         insert into "run_steps" ("run_id", "seq", "type", "started_at", "duration_ms", "data")
         select "run"."id", "s"."n", "s"."step"->>'type', ("s"."step"->>'started_at')::timestamptz, ("s"."step"->>'duration_ms')::int, "s"."step"->'data'
         from "run", jsonb_array_elements(?::jsonb) with ordinality as "s" ("step", "n")
       )
       select "id" from "run"`,
      [
        run.id,
        run.tenantId,
        run.agentVersion,
        run.sessionId,
        run.userId,
        run.trigger,
        run.status,
        run.input,
        run.parentRunId,
        run.traceId,
        run.messageId,
        run.startedAt,
        run.actor ? JSON.stringify(actorJson(run.actor)) : null,
        run.request ? JSON.stringify(run.request) : null,
        run.agentId,
        run.tenantId,
        stepsJson(steps),
      ],
      'all',
    );
    return rows.length > 0;
  }

  /**
   * In the caller's transaction: the run's new state, then its new steps after those it has. The
   * update locks the run's row first, so steps written at once (two decisions of one answer) take
   * distinct places. False, writing nothing, when the run ended meanwhile (a background run
   * cancelled): the caller stops the turn. Watchers are told at the commit.
   */
  async progress(runId: string, progress: RunProgress, steps: readonly NewRunStep[]): Promise<boolean> {
    const { status, output, usage, credits, error, completedAt, sessionId } = progress;
    const ended = status === 'completed' || status === 'failed' || status === 'cancelled';
    const rows = await this.em.execute<unknown[]>(
      `update "runs" set "status" = ?, "output" = ?, "prompt_tokens" = ?, "completion_tokens" = ?, "total_tokens" = ?, "credits" = ?,
         "error_code" = ?, "error_message" = ?, "session_id" = ?, "completed_at" = ?::timestamptz,
         "duration_ms" = case when ?::timestamptz is null then null else greatest(0, floor(extract(epoch from (?::timestamptz - "started_at")) * 1000))::int end,
         "lease_owner" = case when ? then null else "lease_owner" end, "lease_until" = case when ? then null else "lease_until" end
       where "id" = ? and "status" in ('queued', 'running', 'awaiting_approval')
       returning pg_notify('${RUN_PROGRESS_CHANNEL}', "id")`,
      [status, output, usage.promptTokens, usage.completionTokens, usage.totalTokens, credits, error?.code ?? null, error?.message ?? null, sessionId, completedAt, completedAt, completedAt, ended, ended, runId],
      'all',
    );
    if (rows.length === 0) return false;
    await this.insertSteps(runId, steps);
    return true;
  }

  /**
   * A claimed run begins (again), with the version of the agent it runs (the current one when it
   * was queued without one): the steps of an attempt that stopped go, its first ones go in.
   */
  async restart(runId: string, agentVersion: number, steps: readonly NewRunStep[]): Promise<void> {
    await this.em.execute(`update "runs" set "agent_version" = ? where "id" = ?`, [agentVersion, runId], 'run');
    await this.em.execute(`delete from "run_steps" where "run_id" = ?`, [runId], 'run');
    await this.insertSteps(runId, steps);
  }

  /**
   * Cancels a queued or running background run of the tenant; its worker stops at its next write.
   * What became of it: `cancelled`, or why not (`absent`, `not_background`, `finished`).
   */
  async cancel(tenantId: string, id: string, now: Date): Promise<'cancelled' | 'absent' | 'not_background' | 'finished'> {
    const rows = await this.em.execute<{ id: string }[]>(
      `update "runs" set "status" = 'cancelled', "error_code" = 'cancelled', "error_message" = 'Cancelled by request.', "completed_at" = ?::timestamptz,
         "duration_ms" = greatest(0, floor(extract(epoch from (?::timestamptz - "started_at")) * 1000))::int, "lease_owner" = null, "lease_until" = null
       where "id" = ? and "tenant_id" = ? and "trigger" = 'background' and "status" in ('queued', 'running')
       returning pg_notify('${RUN_PROGRESS_CHANNEL}', "id")`,
      [now, now, id, tenantId],
      'all',
    );
    if (rows.length > 0) return 'cancelled';
    const run = await this.find(tenantId, id);
    return !run ? 'absent' : run.trigger === 'background' ? 'finished' : 'not_background';
  }

  /** The steps a run's event stream sends (all but extraction, which comes after its end), after position `afterSeq`. */
  streamedSteps(runId: string, afterSeq: number): Promise<RunStepRow[]> {
    return this.em.fork().find(RunStepRow, { runId, seq: { $gt: afterSeq }, type: { $ne: 'extraction' } }, { orderBy: { seq: 'asc' } });
  }

  /** The last of those steps' positions; 0 when it has none. */
  async lastStreamedSeq(runId: string): Promise<number> {
    const [row] = await this.em.fork().execute<{ seq: number | null }[]>(`select max("seq") as "seq" from "run_steps" where "run_id" = ? and "type" <> 'extraction'`, [runId], 'all');
    return row?.seq ?? 0;
  }

  /** Where a run is, read afresh (a watcher's loop reads it many times). */
  findFresh(tenantId: string, id: string): Promise<Run | null> {
    return this.em.fork().findOne(Run, { id, tenantId });
  }

  /** In the caller's transaction: steps after those the run has, its row locked first; none if the run is gone. */
  async append(runId: string, steps: readonly NewRunStep[]): Promise<void> {
    if (steps.length === 0) return;
    await this.em.execute(`select "id" from "runs" where "id" = ? for update`, [runId], 'all');
    await this.insertSteps(runId, steps);
  }

  private async insertSteps(runId: string, steps: readonly NewRunStep[]): Promise<void> {
    if (steps.length === 0) return;
    // One statement for the lot: a turn's steps cost it one round trip, however many rounds it had.
    await this.em.execute(
      `insert into "run_steps" ("run_id", "seq", "type", "started_at", "duration_ms", "data")
       select "r"."id", coalesce((select max("seq") from "run_steps" where "run_id" = "r"."id"), 0) + "s"."n",
         "s"."step"->>'type', ("s"."step"->>'started_at')::timestamptz, ("s"."step"->>'duration_ms')::int, "s"."step"->'data'
       from "runs" as "r", jsonb_array_elements(?::jsonb) with ordinality as "s" ("step", "n")
       where "r"."id" = ?`,
      [stepsJson(steps), runId],
      'run',
    );
  }

  find(tenantId: string, id: string): Promise<Run | null> {
    return this.em.findOne(Run, { id, tenantId });
  }

  /** The run a turn's user message began. */
  forMessage(tenantId: string, messageId: string): Promise<Run | null> {
    return this.em.findOne(Run, { messageId, tenantId });
  }

  /** The run of a tool call's turn (its id and the agent's version it runs); null when that turn has none (stored before runs were kept). */
  async runOfCall(tenantId: string, sessionId: string, callId: string): Promise<{ id: string; agentVersion: number } | null> {
    const [row] = await this.em.execute<{ id: string; agent_version: number }[]>(
      `select "r"."id", "r"."agent_version" from "tool_calls" as "c"
         join "chat_messages" as "a" on "a"."id" = "c"."message_id"
         join lateral (select "u"."id" from "chat_messages" as "u" where "u"."session_id" = "a"."session_id" and "u"."role" = 'user' and "u"."seq" < "a"."seq" order by "u"."seq" desc limit 1) as "u" on true
         join "runs" as "r" on "r"."message_id" = "u"."id"
       where "c"."id" = ? and "c"."tenant_id" = ? and "c"."session_id" = ?`,
      [callId, tenantId, sessionId],
      'all',
    );
    return row ? { id: row.id, agentVersion: row.agent_version } : null;
  }

  /** How many runs the chain from `runId` up to its first ancestor holds (1: a run no tool call began). */
  async depthOf(runId: string): Promise<number> {
    const [row] = await this.em.execute<{ depth: number }[]>(
      `with recursive "chain" ("id", "parent_run_id", "depth") as (
         select "id", "parent_run_id", 1 from "runs" where "id" = ?
         union all
         select "r"."id", "r"."parent_run_id", "c"."depth" + 1 from "runs" as "r" join "chain" as "c" on "r"."id" = "c"."parent_run_id" where "c"."depth" < 10
       )
       select coalesce(max("depth"), 1)::int as "depth" from "chain"`,
      [runId],
      'all',
    );
    return row?.depth ?? 1;
  }

  /** In order. */
  stepsOf(runId: string): Promise<RunStepRow[]> {
    return this.em.find(RunStepRow, { runId }, { orderBy: { seq: 'asc' } });
  }

  /** Runs whose parent is one of these, oldest first. */
  childrenOf(tenantId: string, parentIds: readonly string[]): Promise<Run[]> {
    if (parentIds.length === 0) return Promise.resolve([]);
    return this.em.find(Run, { tenantId, parentRunId: { $in: [...parentIds] } }, { orderBy: [{ startedAt: 'asc' }, { id: 'asc' }] });
  }

  /** Newest first; `total` counts the runs matching the filter up to RUNS_TOTAL_CAP; `hasMore` when a further page has any. */
  /** The agent must be the tenant's: the caller has checked it. */
  async list(tenantId: string, agentId: string, filter: RunFilter, page: CursorPage): Promise<{ items: Run[]; total: number; hasMore: boolean }> {
    const startedAt = { ...(filter.since ? { $gte: filter.since } : {}), ...(filter.until ? { $lt: filter.until } : {}) };
    const where = {
      tenantId,
      agentId,
      ...(filter.status ? { status: filter.status } : {}),
      ...(filter.trigger ? { trigger: filter.trigger } : {}),
      ...(filter.userId !== undefined ? { userId: filter.userId } : {}),
      ...(filter.sessionId !== undefined ? { sessionId: filter.sessionId } : {}),
      ...(filter.minDurationMs !== undefined ? { durationMs: { $gte: filter.minDurationMs } } : {}),
      ...(Object.keys(startedAt).length > 0 ? { startedAt } : {}),
    };
    const after = page.after ? { $or: [{ startedAt: { $lt: page.after.createdAt } }, { startedAt: page.after.createdAt, id: { $lt: page.after.id } }] } : {};
    // Counted by the agent alone: its runs are all its tenant's (the caller checked the agent is),
    // and without tenant_id, which no index of runs holds, the count reads only an index.
    const { tenantId: _tenant, ...ofAgent } = where;
    const capped = this.em.createQueryBuilder(Run).select('id').where(ofAgent).limit(RUNS_TOTAL_CAP).toQuery();
    const [items, [counted]] = await Promise.all([
      // One more than the page: whether it exists decides next_cursor, so a full last page ends the list.
      this.em.find(Run, { ...where, ...after }, { orderBy: [{ startedAt: 'desc' }, { id: 'desc' }], limit: page.limit + 1 }),
      this.em.execute<{ total: number }[]>(`select count(*)::int as "total" from (${capped.sql}) as "matching"`, [...capped.params], 'all'),
    ]);
    return { items: items.slice(0, page.limit), total: counted?.total ?? 0, hasMore: items.length > page.limit };
  }

  /** Last one wins. False when the run is not the tenant's. */
  async setFeedback(tenantId: string, id: string, feedback: RunFeedback): Promise<boolean> {
    return (await this.em.nativeUpdate(Run, { id, tenantId }, { feedback })) > 0;
  }

  /** Runs of the agent begun in [since, until), summed in one pass over the list's index. */
  async stats(tenantId: string, agentId: string, since: Date, until: Date): Promise<RunStats> {
    const [row] = await this.em.execute<StatsRow[]>(
      `select count(*)::int as "runs",
         count(*) filter (where "status" = 'completed')::int as "completed",
         count(*) filter (where "status" = 'failed')::int as "failed",
         count(*) filter (where "status" in ('completed', 'failed', 'cancelled'))::int as "ended",
         percentile_disc(0.5) within group (order by "duration_ms") filter (where "status" in ('completed', 'failed', 'cancelled')) as "p50",
         percentile_disc(0.95) within group (order by "duration_ms") filter (where "status" in ('completed', 'failed', 'cancelled')) as "p95",
         coalesce(sum("prompt_tokens"), 0) as "prompt_tokens", coalesce(sum("completion_tokens"), 0) as "completion_tokens",
         coalesce(sum("total_tokens"), 0) as "total_tokens", coalesce(sum("credits"), 0) as "credits",
         avg(("feedback"->>'score')::int)::float8 as "feedback_mean", count("feedback")::int as "feedback_count"
       from "runs" where "agent_id" = ? and "tenant_id" = ? and "started_at" >= ? and "started_at" < ?`,
      [agentId, tenantId, since, until],
      'all',
    );
    const stats = row!;
    return {
      runs: stats.runs,
      completed: stats.completed,
      failed: stats.failed,
      failureRate: stats.ended === 0 ? 0 : stats.failed / stats.ended,
      p50DurationMs: stats.p50,
      p95DurationMs: stats.p95,
      usage: { promptTokens: Number(stats.prompt_tokens), completionTokens: Number(stats.completion_tokens), totalTokens: Number(stats.total_tokens) },
      credits: Number(stats.credits),
      feedbackMean: stats.feedback_mean,
      feedbackCount: stats.feedback_count,
    };
  }

  /** Deletes up to `limit` runs begun before `cutoff` (their steps go with them); how many went. */
  async deleteStartedBefore(cutoff: Date, limit: number): Promise<number> {
    const rows = await this.em.execute<{ id: string }[]>(
      `delete from "runs" where "id" in (select "id" from "runs" where "started_at" < ? order by "started_at" limit ?) returning "id"`,
      [cutoff, limit],
      'all',
    );
    return rows.length;
  }

  /**
   * Ends as failed the runs of a caller's request (not leased) still `running` though begun before
   * `before`: their process stopped mid-turn, and nothing else would ever end them. How many.
   */
  async failAbandoned(before: Date, now: Date, reason: { code: string; message: string }): Promise<number> {
    const rows = await this.em.execute<{ id: string }[]>(
      `update "runs" set "status" = 'failed', "error_code" = ?, "error_message" = ?, "completed_at" = ?,
              "duration_ms" = greatest(0, (extract(epoch from (?::timestamptz - "started_at")) * 1000)::int)
        where "status" = 'running' and "started_at" < ? and "trigger" not in (${LEASED_TRIGGERS_SQL})
        returning "id"`,
      [reason.code, reason.message, now, now, before],
      'all',
    );
    return rows.length;
  }
}

/** An actor as a JSON column keeps it. */
function actorJson({ kind, userId, tenantId, role, scopes, apiKeyId }: Actor): Record<string, unknown> {
  return { kind, userId, tenantId, role, scopes: [...scopes], ...(apiKeyId === undefined ? {} : { apiKeyId }) };
}

/** Steps as one JSON parameter, which the statements take apart: one round trip for any number. */
function stepsJson(steps: readonly NewRunStep[]): string {
  return JSON.stringify(steps.map((step) => ({ type: step.type, started_at: step.startedAt.toISOString(), duration_ms: step.durationMs, data: step.data })));
}
