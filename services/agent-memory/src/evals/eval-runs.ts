import { newId, type Clock, type Logger } from '@agent-platform/kit';
import type { EntityManager } from '@agent-platform/kit/db';
import { newEvent, recordEvent } from '@agent-platform/kit/events';
import { LeasedWorkLoop } from '@agent-platform/kit/work';
import type { ChatModel } from '../models/chat-model.js';
import type { RunsRepository } from '../runs/runs.repository.js';
import type { StoredScore } from './evals.entity.js';
import type { EvalsRepository, EvalSummary, ResultToScore, ScoredResult } from './evals.repository.js';
import { score } from './scorers.js';

export interface EvalRunsOptions {
  em: EntityManager;
  evals: EvalsRepository;
  runs: Pick<RunsRepository, 'start'>;
  /** The judge of `llm_judge` scorers: the platform's model. */
  model: ChatModel;
  /** Tells the background workers runs were queued: they claim them now rather than at their next poll. */
  wakeRuns(): void;
  /** Runs work in a database context of its own (the ORM's request context). */
  inContext<T>(work: () => Promise<T>): Promise<T>;
  /** How long a scorer holds a result; a judge's call is bounded by the model's time-out, well inside it. */
  leaseMs: number;
  concurrency: number;
  pollIntervalMs: number;
  clock: Clock;
  logger: Logger;
}

/** Running evals fed per poll, at most: each is a transaction. */
const FEED_PER_POLL = 20;

/**
 * The work of evals (decisions §16), on every replica. An eval's items run as queued runs (trigger
 * `eval`, run by the background workers as the principal stored with the eval), at most its
 * `concurrency` at once; each run that ends is scored here, which frees its place for the next
 * item; the last score ends the eval and records `eval.completed` in the same transaction. All of
 * it is durable: a replica that stops leaves its runs and its leased results to the others.
 */
export class EvalRuns {
  private readonly options: EvalRunsOptions;
  private readonly loop: LeasedWorkLoop<ResultToScore>;

  constructor(options: EvalRunsOptions) {
    this.options = options;
    const { evals, leaseMs } = options;
    this.loop = new LeasedWorkLoop<ResultToScore>({
      claim: async (limit) => {
        await this.feedHungry();
        return evals.claimScoring(limit, leaseMs);
      },
      process: (result, signal) => options.inContext(() => this.process(result, signal)),
      release: (result) => evals.releaseScoring(result.evalId, result.position),
      concurrency: options.concurrency,
      pollIntervalMs: options.pollIntervalMs,
      logger: options.logger,
      name: 'eval-scoring',
    });
  }

  start(): void {
    this.loop.start();
  }

  /** A run of an eval ended here: score it now rather than at the next poll. */
  wake(): void {
    this.loop.wake();
  }

  stop(graceMs: number): Promise<void> {
    return this.loop.stop(graceMs);
  }

  /**
   * Queues runs for the eval's next items, up to its concurrency. The eval's row is locked while
   * it counts, so replicas feeding it at once queue no more between them.
   */
  async feed(evalId: string): Promise<void> {
    const { em, evals, runs, clock } = this.options;
    const queued = await em.transactional(async () => {
      const evaluation = await evals.lockRunning(evalId);
      if (!evaluation) return 0;
      const next = await evals.nextPending(evalId, evaluation.concurrency);
      for (const item of next) {
        const runId = newId('run');
        const started = await runs.start(
          {
            id: runId,
            tenantId: evaluation.tenantId,
            agentId: evaluation.agentId,
            agentVersion: evaluation.agentVersion,
            sessionId: null,
            userId: item.input.user_id ?? null,
            trigger: 'eval',
            status: 'queued',
            input: item.input.message,
            parentRunId: null,
            traceId: null,
            messageId: null,
            startedAt: new Date(clock.now()),
            actor: evaluation.actor,
            request: { sessionId: null, userId: item.input.user_id ?? null, agentVersion: evaluation.agentVersion },
          },
          [],
        );
        // The agent is gone: the eval went with it (ON DELETE CASCADE) or is about to.
        if (!started) return 0;
        await evals.markRunning(evalId, item.position, runId);
      }
      return next.length;
    });
    if (queued > 0) this.options.wakeRuns();
  }

  /** What a replica that stopped mid-way left: evals with items to start, and evals scored but not ended. */
  private async feedHungry(): Promise<void> {
    for (const evalId of await this.options.evals.hungry(FEED_PER_POLL)) {
      await this.options.inContext(() => this.feed(evalId));
    }
    for (const { id, tenantId } of await this.options.evals.finished(FEED_PER_POLL)) {
      await this.options.inContext(() => this.completeIfScored(id, tenantId));
    }
  }

  private async process(result: ResultToScore, signal: AbortSignal): Promise<void> {
    const scored = await this.scored(result, signal);
    if (!(await this.options.evals.saveScores(result, scored))) return;
    await this.feed(result.evalId);
    await this.completeIfScored(result.evalId, result.tenantId);
  }

  /** A completed run's output scored by every scorer; any other end fails every scorer, saying why. */
  private async scored(result: ResultToScore, signal: AbortSignal): Promise<ScoredResult> {
    const run = result.run;
    const scoredAt = new Date(this.options.clock.now());
    const base = { runStatus: run?.status ?? 'deleted', output: run?.output ?? null, durationMs: run?.durationMs ?? null, totalTokens: run?.totalTokens ?? 0, credits: run?.credits ?? 0, scoredAt };
    if (run?.status !== 'completed') {
      const error = run?.error ?? (run ? { code: run.status, message: `The run ended ${run.status.replaceAll('_', ' ')}, without a final answer.` } : { code: 'not_found', message: 'The run is gone: its session was deleted.' });
      const scores: StoredScore[] = result.scorers.map((scorer) => ({ name: scorer.name, type: scorer.type, score: 0, passed: false, reason: error.message }));
      return { ...base, error, scores, passed: false };
    }
    const sample = { input: result.input.message, output: run.output ?? '', ...(result.expected === null ? {} : { expected: result.expected }) };
    const scores: StoredScore[] = [];
    for (const scorer of result.scorers) {
      signal.throwIfAborted();
      const verdict = await score(scorer, sample, { judge: this.options.model, signal });
      scores.push({ name: verdict.name, type: verdict.type, score: verdict.score, passed: verdict.passed, reason: verdict.reason ?? null });
    }
    return { ...base, error: null, scores, passed: scores.every((one) => one.passed) };
  }

  private async completeIfScored(evalId: string, tenantId: string): Promise<void> {
    const { em, evals, clock } = this.options;
    await em.transactional(async (tx) => {
      const now = new Date(clock.now());
      if (!(await evals.completeIfScored(evalId, now))) return;
      const evaluation = await evals.find(tenantId, evalId);
      if (!evaluation) return;
      const summary = await evals.summary(evaluation);
      await recordEvent(tx, newEvent('eval.completed', tenantId, completedData(evaluation, summary, now), now));
    });
  }
}

/** decisions §16: what eval.completed carries. */
function completedData(
  evaluation: { id: string; agentId: string; agentVersion: number; datasetId: string; itemCount: number; createdAt: Date },
  summary: EvalSummary,
  now: Date,
): Record<string, unknown> {
  return {
    eval_id: evaluation.id,
    agent_id: evaluation.agentId,
    agent_version: evaluation.agentVersion,
    dataset_id: evaluation.datasetId,
    status: 'completed',
    items: evaluation.itemCount,
    passed: summary.passed,
    failed_runs: summary.failedRuns,
    scorers: summary.scorers.map((scorer) => ({ name: scorer.name, type: scorer.type, mean: scorer.mean, pass_rate: scorer.passRate })),
    credits: summary.credits,
    duration_ms: now.getTime() - evaluation.createdAt.getTime(),
  };
}
