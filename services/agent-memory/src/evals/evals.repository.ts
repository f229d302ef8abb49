import type { Actor } from '@agent-platform/kit';
import type { EntityManager } from '@agent-platform/kit/db';
import type { DatasetItemInput } from '../datasets/datasets.entity.js';
import { Eval, EvalResult, type StoredScore } from './evals.entity.js';
import type { ScorerSpec } from './scorers.js';

export interface NewEval {
  id: string;
  tenantId: string;
  datasetId: string;
  agentId: string;
  agentVersion: number;
  scorers: ScorerSpec[];
  concurrency: number;
  actor: Actor;
  createdAt: Date;
}

/** A dataset item as an eval copies it. */
export interface EvalItem {
  id: string;
  input: DatasetItemInput;
  expected: string | null;
}

/** A result whose run ended, leased to this replica's scorer. */
export interface ResultToScore {
  evalId: string;
  position: number;
  tenantId: string;
  input: DatasetItemInput;
  expected: string | null;
  scorers: ScorerSpec[];
  /** The lease's end as the database wrote it: the token that storing the scores must still match. */
  lease: string;
  runId: string | null;
  /** Null when the run is gone (its session deleted meanwhile). */
  run: { status: string; output: string | null; error: { code: string; message: string } | null; durationMs: number | null; totalTokens: number; credits: number } | null;
}

export interface ScoredResult {
  runStatus: string;
  output: string | null;
  error: { code: string; message: string } | null;
  scores: StoredScore[];
  passed: boolean;
  durationMs: number | null;
  totalTokens: number;
  credits: number;
  scoredAt: Date;
}

/** An eval's figures over its scored results (decisions §16). */
export interface EvalSummary {
  scored: number;
  running: number;
  pending: number;
  passed: number;
  failedRuns: number;
  durationP50Ms: number | null;
  durationP95Ms: number | null;
  totalTokens: number;
  credits: number;
  scorers: { name: string; type: string; mean: number | null; passRate: number | null }[];
}

/** One side of a comparison: what an item scored in one eval. */
export type ComparedResult = Pick<EvalResult, 'position' | 'itemId' | 'input' | 'expected' | 'runId' | 'runStatus' | 'output' | 'scores' | 'passed' | 'state'>;

/** Run statuses after which a run does nothing more by itself: its result can be scored. */
const ENDED_RUN_STATUSES = ['completed', 'failed', 'cancelled', 'awaiting_approval'];

interface ResultRow {
  eval_id: string;
  position: number;
  lease: string;
  tenant_id: string;
  input: DatasetItemInput | string;
  expected: string | null;
  scorers: ScorerSpec[] | string;
  run_id: string | null;
  run_status: string | null;
  output: string | null;
  error_code: string | null;
  error_message: string | null;
  duration_ms: number | null;
  total_tokens: number | null;
  credits: number | null;
}

/**
 * Evals and their results. Reads take the tenant id: another tenant's eval is simply not there.
 * The statements of the scorers' loop run on forks of their own: it calls them outside any request.
 */
export class EvalsRepository {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  /** In the caller's transaction: the eval, running, and a pending result per item, in the items' order. */
  async insert(evaluation: NewEval, items: readonly EvalItem[]): Promise<Eval> {
    const row = this.em.create(Eval, { ...evaluation, status: 'running', itemCount: items.length, completedAt: null });
    await this.em.flush();
    await this.em.execute(
      `insert into "eval_results" ("eval_id", "position", "item_id", "input", "expected", "state")
       select ?, ("i"."n" - 1)::int, "i"."item"->>'id', "i"."item"->'input', "i"."item"->>'expected', 'pending'
         from jsonb_array_elements(?::jsonb) with ordinality as "i" ("item", "n")`,
      [evaluation.id, JSON.stringify(items)],
      'run',
    );
    return row;
  }

  find(tenantId: string, id: string): Promise<Eval | null> {
    return this.em.findOne(Eval, { id, tenantId });
  }

  /** Newest first. */
  async list(tenantId: string, filter: { agentId?: string; datasetId?: string }, limit: number, offset: number): Promise<{ items: Eval[]; total: number }> {
    const where = { tenantId, ...(filter.agentId ? { agentId: filter.agentId } : {}), ...(filter.datasetId ? { datasetId: filter.datasetId } : {}) };
    const [items, total] = await this.em.findAndCount(Eval, where, { orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], limit, offset });
    return { items, total };
  }

  /**
   * In the caller's transaction: locks a running eval's row, so that two replicas feeding it queue
   * no more runs than its concurrency between them. Null when it is not running.
   */
  async lockRunning(id: string): Promise<Eval | null> {
    const rows = await this.em.execute<{ id: string }[]>(`select "id" from "evals" where "id" = ? and "status" = 'running' for update`, [id], 'all');
    return rows.length > 0 ? this.em.findOne(Eval, { id }) : null;
  }

  /** In the caller's transaction: the next pending items, up to the eval's free places. */
  async nextPending(evalId: string, concurrency: number): Promise<{ position: number; input: DatasetItemInput }[]> {
    const rows = await this.em.execute<{ position: number; input: DatasetItemInput | string }[]>(
      `select "position", "input" from "eval_results"
        where "eval_id" = ? and "state" = 'pending'
        order by "position"
        limit greatest(0, ? - (select count(*) from "eval_results" where "eval_id" = ? and "state" in ('running', 'scoring')))`,
      [evalId, concurrency, evalId],
      'all',
    );
    return rows.map((row) => ({ position: row.position, input: parsed(row.input) }));
  }

  /** In the caller's transaction. */
  async markRunning(evalId: string, position: number, runId: string): Promise<void> {
    await this.em.execute(`update "eval_results" set "state" = 'running', "run_id" = ? where "eval_id" = ? and "position" = ?`, [runId, evalId, position], 'run');
  }

  /**
   * Running evals with items to start and room to start them: those a replica that stopped between
   * an eval's commit and its first runs left waiting. Feeding after each scored item does the rest.
   */
  async hungry(limit: number): Promise<string[]> {
    const rows = await this.em.fork().execute<{ id: string }[]>(
      `select "e"."id" from "evals" "e"
        where "e"."status" = 'running'
          and exists (select 1 from "eval_results" "r" where "r"."eval_id" = "e"."id" and "r"."state" = 'pending')
          and (select count(*) from "eval_results" "r" where "r"."eval_id" = "e"."id" and "r"."state" in ('running', 'scoring')) < "e"."concurrency"
        order by "e"."created_at" limit ?`,
      [limit],
      'all',
    );
    return rows.map((row) => row.id);
  }

  /**
   * Running evals whose every result is scored: those whose last score's replica stopped before the
   * transaction that ends the eval. Their tenants, to end them in.
   */
  async finished(limit: number): Promise<{ id: string; tenantId: string }[]> {
    const rows = await this.em.fork().execute<{ id: string; tenant_id: string }[]>(
      `select "e"."id", "e"."tenant_id" from "evals" "e"
        where "e"."status" = 'running' and not exists (select 1 from "eval_results" "r" where "r"."eval_id" = "e"."id" and "r"."state" <> 'scored')
        order by "e"."created_at" limit ?`,
      [limit],
      'all',
    );
    return rows.map((row) => ({ id: row.id, tenantId: row.tenant_id }));
  }

  /**
   * Results due for scoring, leased for `leaseMs`: those whose run ended (or is gone), and those
   * whose scorer's replica stopped before it stored the scores (the lease ran out).
   */
  async claimScoring(limit: number, leaseMs: number): Promise<ResultToScore[]> {
    const rows = await this.em.fork().execute<ResultRow[]>(
      `with "due" as (
         select "r"."eval_id", "r"."position" from "eval_results" "r" left join "runs" "u" on "u"."id" = "r"."run_id"
          where ("r"."state" = 'running' and ("u"."id" is null or "u"."status" in (${ENDED_RUN_STATUSES.map(() => '?').join(', ')})))
             or ("r"."state" = 'scoring' and "r"."lease_until" < now())
          order by "r"."eval_id", "r"."position" limit ? for update of "r" skip locked
       ), "leased" as (
         update "eval_results" "r" set "state" = 'scoring', "lease_until" = now() + make_interval(secs => ?)
           from "due" where "r"."eval_id" = "due"."eval_id" and "r"."position" = "due"."position"
         returning "r"."eval_id", "r"."position", "r"."lease_until"::text as "lease", "r"."input", "r"."expected", "r"."run_id"
       )
       select "l".*, "e"."tenant_id", "e"."scorers", "u"."status" as "run_status", "u"."output", "u"."error_code", "u"."error_message", "u"."duration_ms", "u"."total_tokens", "u"."credits"
         from "leased" "l" join "evals" "e" on "e"."id" = "l"."eval_id" left join "runs" "u" on "u"."id" = "l"."run_id"`,
      [...ENDED_RUN_STATUSES, limit, leaseMs / 1000],
      'all',
    );
    return rows.map((row) => ({
      evalId: row.eval_id,
      position: row.position,
      tenantId: row.tenant_id,
      input: parsed(row.input),
      expected: row.expected,
      scorers: parsed(row.scorers),
      lease: row.lease,
      runId: row.run_id,
      run:
        row.run_status === null
          ? null
          : {
              status: row.run_status,
              output: row.output,
              error: row.error_code === null ? null : { code: row.error_code, message: row.error_message ?? '' },
              durationMs: row.duration_ms,
              totalTokens: row.total_tokens ?? 0,
              credits: row.credits ?? 0,
            },
    }));
  }

  /** Stores a leased result's scores; false when its lease ran out meanwhile (another replica took it up). */
  async saveScores(result: Pick<ResultToScore, 'evalId' | 'position' | 'lease'>, scored: ScoredResult): Promise<boolean> {
    const updated = await this.em.execute<{ affectedRows: number }>(
      `update "eval_results" set "state" = 'scored', "lease_until" = null, "run_status" = ?, "output" = ?, "error" = ?::jsonb, "scores" = ?::jsonb, "passed" = ?,
              "duration_ms" = ?, "total_tokens" = ?, "credits" = ?, "scored_at" = ?
        where "eval_id" = ? and "position" = ? and "state" = 'scoring' and "lease_until" = ?::timestamptz`,
      [
        scored.runStatus,
        scored.output,
        scored.error ? JSON.stringify(scored.error) : null,
        JSON.stringify(scored.scores),
        scored.passed,
        scored.durationMs,
        scored.totalTokens,
        scored.credits,
        scored.scoredAt,
        result.evalId,
        result.position,
        result.lease,
      ],
      'run',
    );
    return updated.affectedRows > 0;
  }

  /** Hands a leased result back unscored: due again at once. */
  async releaseScoring(evalId: string, position: number): Promise<void> {
    await this.em.fork().execute(`update "eval_results" set "state" = 'running', "lease_until" = null where "eval_id" = ? and "position" = ? and "state" = 'scoring'`, [evalId, position], 'run');
  }

  /** In the caller's transaction: ends the eval when every result is scored; false when it is not yet (or was ended already). */
  async completeIfScored(evalId: string, now: Date): Promise<boolean> {
    const updated = await this.em.execute<{ affectedRows: number }>(
      `update "evals" set "status" = 'completed', "completed_at" = ?
        where "id" = ? and "status" = 'running' and not exists (select 1 from "eval_results" where "eval_id" = ? and "state" <> 'scored')`,
      [now, evalId, evalId],
      'run',
    );
    return updated.affectedRows > 0;
  }

  async summary(evaluation: Pick<Eval, 'id' | 'scorers'>): Promise<EvalSummary> {
    const [figures] = await this.em.execute<
      { scored: string; running: string; pending: string; passed: string; failed_runs: string; p50: number | null; p95: number | null; tokens: string | null; credits: string | null }[]
    >(
      `select count(*) filter (where "state" = 'scored') as "scored",
              count(*) filter (where "state" in ('running', 'scoring')) as "running",
              count(*) filter (where "state" = 'pending') as "pending",
              count(*) filter (where "passed") as "passed",
              count(*) filter (where "state" = 'scored' and "run_status" is distinct from 'completed') as "failed_runs",
              percentile_disc(0.5) within group (order by "duration_ms") as "p50",
              percentile_disc(0.95) within group (order by "duration_ms") as "p95",
              sum("total_tokens") as "tokens", sum("credits") as "credits"
         from "eval_results" where "eval_id" = ?`,
      [evaluation.id],
      'all',
    );
    const perScorer = await this.em.execute<{ name: string; mean: number | null; pass_rate: number | null }[]>(
      `select "s"->>'name' as "name", avg(("s"->>'score')::float8) as "mean", avg(case when ("s"->>'passed')::boolean then 1.0 else 0.0 end)::float8 as "pass_rate"
         from "eval_results", jsonb_array_elements("scores") as "s"
        where "eval_id" = ? and "state" = 'scored'
        group by "s"->>'name'`,
      [evaluation.id],
      'all',
    );
    const byName = new Map(perScorer.map((row) => [row.name, row]));
    return {
      scored: Number(figures?.scored ?? 0),
      running: Number(figures?.running ?? 0),
      pending: Number(figures?.pending ?? 0),
      passed: Number(figures?.passed ?? 0),
      failedRuns: Number(figures?.failed_runs ?? 0),
      durationP50Ms: figures?.p50 ?? null,
      durationP95Ms: figures?.p95 ?? null,
      totalTokens: Number(figures?.tokens ?? 0),
      credits: Number(figures?.credits ?? 0),
      scorers: evaluation.scorers.map((scorer) => {
        const row = byName.get(scorer.name);
        return { name: scorer.name, type: scorer.type, mean: row?.mean === undefined || row.mean === null ? null : Number(row.mean), passRate: row?.pass_rate ?? null };
      }),
    };
  }

  /** In the items' order, after `afterPosition`. */
  async results(evalId: string, limit: number, afterPosition: number): Promise<{ items: EvalResult[]; hasMore: boolean }> {
    const rows = await this.em.find(EvalResult, { evalId, position: { $gt: afterPosition } }, { orderBy: { position: 'asc' }, limit: limit + 1 });
    return { items: rows.slice(0, limit), hasMore: rows.length > limit };
  }

  /** Every result of both evals, paired by dataset item: what a comparison is made of. */
  async pairs(baseId: string, candidateId: string): Promise<{ base: ComparedResult; candidate: ComparedResult }[]> {
    const [base, candidate] = await Promise.all([this.em.fork().find(EvalResult, { evalId: baseId }, { orderBy: { position: 'asc' } }), this.em.fork().find(EvalResult, { evalId: candidateId })]);
    const byItem = new Map(candidate.map((result) => [result.itemId, result]));
    return base.flatMap((result) => {
      const other = byItem.get(result.itemId);
      return other ? [{ base: result, candidate: other }] : [];
    });
  }
}

/** jsonb comes back parsed from a table and as text from some expressions: either way, the value. */
function parsed<T>(value: T | string): T {
  return typeof value === 'string' ? (JSON.parse(value) as T) : value;
}

