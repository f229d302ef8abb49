import { DomainError, type Logger } from '@agent-platform/kit';
import { LeasedWorkLoop } from '@agent-platform/kit/work';
import type { ClaimedRun, RunLeases } from './run-leases.js';
import type { RunsRepository } from './runs.repository.js';

/** Times a run is taken up after its replica stopped before it fails for good. */
const MAX_ATTEMPTS = 3;

export interface BackgroundRunsOptions {
  runs: Pick<RunsRepository, 'stepsOf'>;
  leases: RunLeases;
  /** Runs a claimed run to its end (ChatService.runQueued). */
  run(claimed: ClaimedRun, signal: AbortSignal): Promise<void>;
  /** Ends a claimed run that will not run, with why. */
  fail(claimed: ClaimedRun, error: DomainError): Promise<void>;
  /** Told when a claimed run was run or failed here (not when it was left to its lease). */
  ended(claimed: ClaimedRun): void;
  /** Runs a claimed run's work in a database context of its own (the ORM's request context). */
  inContext<T>(work: () => Promise<T>): Promise<T>;
  /** This replica, as leases name it. */
  owner: string;
  /** How long a claim holds a run; renewed while it runs, so only a stopped replica loses it. */
  leaseMs: number;
  concurrency: number;
  pollIntervalMs: number;
  logger: Logger;
}

/**
 * The workers of background runs (decisions §16), on every replica: a queued run is claimed by one,
 * and a running one whose replica stopped (its lease ran out) is taken up by another. A run taken
 * up again starts over when nothing it did had an effect outside (no tool call ran); one whose
 * tool calls ran fails with that reason instead, so no call runs twice. Nothing of a turn is
 * charged before it is stored, and it is stored once: never charged twice.
 */
export class BackgroundRuns {
  private readonly options: BackgroundRunsOptions;
  private readonly loop: LeasedWorkLoop<ClaimedRun>;

  constructor(options: BackgroundRunsOptions) {
    this.options = options;
    const { leases, owner, leaseMs } = options;
    this.loop = new LeasedWorkLoop<ClaimedRun>({
      claim: (limit) => leases.claim(owner, limit, leaseMs),
      process: (claimed, signal) => options.inContext(() => this.process(claimed, signal)),
      release: (claimed) => leases.release(claimed.id, owner),
      concurrency: options.concurrency,
      pollIntervalMs: options.pollIntervalMs,
      logger: options.logger,
      name: 'background-runs',
    });
  }

  start(): void {
    this.loop.start();
  }

  /** A run was queued here: claim it now rather than at the next poll. */
  wake(): void {
    this.loop.wake();
  }

  stop(graceMs: number): Promise<void> {
    return this.loop.stop(graceMs);
  }

  private async process(claimed: ClaimedRun, stopping: AbortSignal): Promise<void> {
    const { leases, owner, leaseMs, logger } = this.options;
    if (claimed.attempts > 1) {
      const refusal = await this.refusalToResume(claimed);
      if (refusal) {
        await this.options.fail(claimed, refusal);
        this.options.ended(claimed);
        return;
      }
    }
    // Stopped by this replica stopping, or by the run's lease lost (a cancel ends the lease).
    const running = new AbortController();
    const stop = () => running.abort(stopping.reason);
    stopping.addEventListener('abort', stop, { once: true });
    const renewal = setInterval(() => {
      leases.renew(claimed.id, owner, leaseMs).then(
        (held) => {
          if (!held) running.abort(new Error('the run was cancelled or taken over'));
        },
        (error: unknown) => logger.warn({ err: error, run_id: claimed.id }, 'could not renew a background run’s lease'),
      );
    }, leaseMs / 3);
    try {
      await this.options.run(claimed, running.signal);
      this.options.ended(claimed);
    } catch (error) {
      // Recorded as failed by the turn; a stop or a cancel is no failure of it.
      if (!running.signal.aborted) {
        logger.warn({ err: error, run_id: claimed.id }, 'a background run failed');
        this.options.ended(claimed);
      }
    } finally {
      clearInterval(renewal);
      stopping.removeEventListener('abort', stop);
    }
  }

  /**
   * Why a run taken up again must not run again: a round of it asked for tool calls (stored before
   * they ran, so they may have), or it was taken up too often.
   */
  private async refusalToResume(claimed: ClaimedRun): Promise<DomainError | undefined> {
    if (claimed.attempts > MAX_ATTEMPTS) {
      return new DomainError('service_unavailable', `The run was interrupted ${MAX_ATTEMPTS} times, each by the stop of the replica running it.`);
    }
    const steps = await this.options.runs.stepsOf(claimed.id);
    const askedForCalls = steps.some((step) => step.type === 'tool' || (step.type === 'model' && Array.isArray(step.data['tool_calls']) && step.data['tool_calls'].length > 0));
    if (askedForCalls) {
      return new DomainError('service_unavailable', 'The replica running the run stopped after it began its tool calls; it is not run again, so no call runs twice.');
    }
    return undefined;
  }
}
