import { ACCESS, characters, RUN_STATUSES, RUN_TRIGGERS, type RunStatus, DECISION_COMMENT_MAX, DomainError, FieldErrors, isId, requireAccess, type Actor, type Clock, type CursorPage, type Logger } from '@agent-platform/kit';
import type { AgentsRepository } from '../agents/agents.repository.js';
import type { PgNotifications } from '@agent-platform/kit/db';
import type { Run, RunStepRow } from './runs.entity.js';
import type { RunFilter, RunStats, RunsRepository } from './runs.repository.js';

const DAY_MS = 86_400_000;
/** Runs deleted per statement by retention: a big backlog goes in bites, not one long lock. */
const RETENTION_BATCH = 5_000;
/**
 * A run of a caller's request still running after this long was left by a process that stopped:
 * every caller's deadline (the gateway's MODEL_DEADLINE_MS, 5 minutes by default) ends a live one
 * long before, its cancel recorded. Leased runs are their workers' to end.
 */
const ABANDONED_AFTER_MS = 30 * 60_000;
const ABANDONED = { code: 'service_unavailable', message: 'The process running the turn stopped before the turn ended.' };

/** The list's filters as a caller gives them, before they are checked. */
export interface RunFilterRequest {
  status: string | undefined;
  trigger: string | undefined;
  userId: string | undefined;
  sessionId: string | undefined;
  since: Date | undefined;
  until: Date | undefined;
  minDurationMs: number | undefined;
}

/** One event of a run's stream (decisions §16): its steps, each with its place as `id`, then how it ended. */
export interface RunStreamEvent {
  /** Steps and the end have one, increasing; a status report has none (it is not resumed from). */
  id: number | undefined;
  type: 'run.status' | 'run.step' | 'run.completed' | 'run.failed' | 'run.cancelled';
  run: Run;
  step: RunStepRow | undefined;
}

/** How long a watcher waits for a notification before it looks anyway (one missed, or none coming). */
const WATCH_FALLBACK_MS = 1_000;
const ENDED: readonly RunStatus[] = ['completed', 'failed', 'cancelled'];

export interface RunsServiceOptions {
  runs: RunsRepository;
  /** Told at the commit of each run's progress (RUN_PROGRESS_CHANNEL), keyed by the run's id. */
  progress: Pick<PgNotifications, 'wait'>;
  agents: AgentsRepository;
  /** RUN_RETENTION_DAYS: runs begun longer ago are deleted. */
  retentionDays: number;
  clock: Clock;
  logger: Logger;
}

/** decisions §16: reading runs, scoring them, summing an agent's, and forgetting old ones. */
export class RunsService {
  private readonly options: RunsServiceOptions;

  constructor(options: RunsServiceOptions) {
    this.options = options;
  }

  /** A run of the actor's tenant with its steps. */
  async get(actor: Actor, runId: string): Promise<{ run: Run; steps: RunStepRow[] }> {
    requireAccess(actor, ACCESS.agents.read);
    const run = await this.requireRun(actor, runId);
    return { run, steps: await this.options.runs.stepsOf(run.id) };
  }

  /**
   * A run's events as they happen, after position `after` (0: from the start): first its status,
   * then each step not sent yet, then its end, whose id is one past its last step's. Ends there,
   * or when `signal` aborts. The extraction step, which comes after the end, is not sent.
   */
  async *watch(actor: Actor, runId: string, after: number, signal: AbortSignal): AsyncGenerator<RunStreamEvent, void, undefined> {
    requireAccess(actor, ACCESS.agents.read);
    if (!Number.isInteger(after) || after < 0) throw DomainError.validation([{ field: 'after', message: 'must be an integer of at least 0' }]);
    let run = await this.requireRun(actor, runId);
    let reported: RunStatus | undefined;
    let last = after;
    while (!signal.aborted) {
      const ended = ENDED.includes(run.status);
      // A new watch opens with the run as it is, before any step it already has (docs/api.md:
      // first run.status); a resumed one tells only what came after.
      if (after === 0 && reported === undefined) {
        reported = run.status;
        yield { id: undefined, type: 'run.status', run, step: undefined };
      }
      // Read after the status: steps stored with an end are committed with it, so none is missed.
      for (const step of await this.options.runs.streamedSteps(run.id, last)) {
        last = step.seq;
        yield { id: step.seq, type: 'run.step', run, step };
      }
      if (ended) {
        const end = (await this.options.runs.lastStreamedSeq(run.id)) + 1;
        if (after < end) yield { id: end, type: `run.${run.status}` as RunStreamEvent['type'], run, step: undefined };
        return;
      }
      if (run.status !== reported) {
        reported = run.status;
        yield { id: undefined, type: 'run.status', run, step: undefined };
      }
      await this.options.progress.wait(run.id, WATCH_FALLBACK_MS, signal);
      run = (await this.options.runs.findFresh(actor.tenantId, run.id)) ?? run;
    }
  }

  /** decisions §16: stops a queued or running background run; 409 for another run, or one already ended. */
  async cancel(actor: Actor, runId: string): Promise<Run> {
    requireAccess(actor, ACCESS.agents.write);
    await this.requireRun(actor, runId);
    const outcome = await this.options.runs.cancel(actor.tenantId, runId, new Date(this.options.clock.now()));
    if (outcome === 'absent') throw DomainError.notFound('Run');
    if (outcome === 'not_background') throw new DomainError('conflict', 'Only a background run can be cancelled; a chat turn stops when its caller closes the connection.');
    if (outcome === 'finished') throw new DomainError('conflict', 'The run has ended already.');
    return this.requireRun(actor, runId);
  }

  /** An agent's runs, newest first. */
  async list(actor: Actor, agentId: string, request: RunFilterRequest, page: CursorPage): Promise<{ items: Run[]; total: number; hasMore: boolean }> {
    requireAccess(actor, ACCESS.agents.read);
    const filter = checkFilter(request);
    await this.requireAgent(actor, agentId);
    return this.options.runs.list(actor.tenantId, agentId, filter, page);
  }

  /** decisions §16: a score of -1, 0 or 1 with an optional comment; the last one wins. */
  async feedback(actor: Actor, runId: string, score: number, comment: string | undefined): Promise<Run> {
    requireAccess(actor, ACCESS.agents.write);
    const errors = new FieldErrors();
    if (score !== -1 && score !== 0 && score !== 1) errors.add('score', 'must be -1, 0 or 1');
    const text = comment?.trim() || null;
    if (text !== null && text.length > DECISION_COMMENT_MAX) errors.add('comment', `must be at most ${characters(DECISION_COMMENT_MAX)} characters`);
    errors.throwIfAny();
    await this.requireRun(actor, runId);
    const feedback = { score: score as -1 | 0 | 1, comment: text, by: actor.userId, at: new Date(this.options.clock.now()).toISOString() };
    if (!(await this.options.runs.setFeedback(actor.tenantId, runId, feedback))) throw DomainError.notFound('Run');
    return this.requireRun(actor, runId);
  }

  /** An agent's runs begun in [since, until), summed; by default the retention period up to now. */
  async stats(actor: Actor, agentId: string, since: Date | undefined, until: Date | undefined): Promise<RunStats & { since: Date; until: Date }> {
    requireAccess(actor, ACCESS.agents.read);
    const end = until ?? new Date(this.options.clock.now());
    const start = since ?? new Date(end.getTime() - this.options.retentionDays * DAY_MS);
    if (start.getTime() > end.getTime()) throw DomainError.validation([{ field: 'since', message: 'must not be after until' }]);
    await this.requireAgent(actor, agentId);
    return { ...(await this.options.runs.stats(actor.tenantId, agentId, start, end)), since: start, until: end };
  }

  /**
   * Deletes the runs begun before the retention period; how many went. First ends the runs their
   * process left running when it stopped, so that the runs kept say how those turns ended.
   */
  async forgetOld(): Promise<number> {
    const { runs, retentionDays, clock, logger } = this.options;
    const now = clock.now();
    const abandoned = await runs.failAbandoned(new Date(now - ABANDONED_AFTER_MS), new Date(now), ABANDONED);
    if (abandoned > 0) logger.warn({ runs: abandoned }, 'runs left running by a stopped process ended as failed');
    const cutoff = new Date(now - retentionDays * DAY_MS);
    let deleted = 0;
    for (;;) {
      const batch = await runs.deleteStartedBefore(cutoff, RETENTION_BATCH);
      deleted += batch;
      if (batch < RETENTION_BATCH) break;
    }
    if (deleted > 0) logger.info({ deleted, retention_days: retentionDays }, 'old runs deleted');
    return deleted;
  }

  private async requireRun(actor: Actor, runId: string): Promise<Run> {
    const run = isId('run', runId) ? await this.options.runs.find(actor.tenantId, runId) : null;
    if (!run) throw DomainError.notFound('Run');
    return run;
  }

  private async requireAgent(actor: Actor, agentId: string): Promise<void> {
    if (!(await this.options.agents.find(actor.tenantId, agentId))) throw DomainError.notFound('Agent');
  }
}

function checkFilter(request: RunFilterRequest): RunFilter {
  const errors = new FieldErrors();
  const status = oneOf(request.status, RUN_STATUSES, 'status', errors);
  const trigger = oneOf(request.trigger, RUN_TRIGGERS, 'trigger', errors);
  if (request.minDurationMs !== undefined && (!Number.isInteger(request.minDurationMs) || request.minDurationMs < 0)) {
    errors.add('min_duration_ms', 'must be an integer of at least 0');
  }
  if (request.since && request.until && request.since.getTime() > request.until.getTime()) errors.add('since', 'must not be after until');
  errors.throwIfAny();
  return { status, trigger, userId: request.userId, sessionId: request.sessionId, since: request.since, until: request.until, minDurationMs: request.minDurationMs };
}

function oneOf<T extends string>(value: string | undefined, allowed: readonly T[], field: string, errors: FieldErrors): T | undefined {
  if (value === undefined) return undefined;
  if ((allowed as readonly string[]).includes(value)) return value as T;
  errors.add(field, `must be one of ${allowed.join(', ')}`);
  return undefined;
}
