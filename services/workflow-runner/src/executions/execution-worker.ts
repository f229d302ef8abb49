import type { Logger } from '@agent-platform/kit';
import { LeasedWorkLoop } from '@agent-platform/kit/work';
import { ExecutionStop, type ExecutionRunner } from '../engine/execution-runner.js';
import type { ExecutionLeases } from './execution-leases.js';
import type { RunnableExecution } from './execution-store.js';

export interface ExecutionWorkerOptions {
  leases: ExecutionLeases;
  runner: ExecutionRunner;
  /** Executions run at once by this runner. */
  concurrency: number;
  leaseMs: number;
  pollIntervalMs: number;
  logger: Logger;
}

/**
 * The executions this runner works on. New ones are run by the runner that accepted them (no claim
 * round trip); the rest — overflow, and executions whose runner died — are claimed from the table
 * by kit's LeasedWorkLoop. Leases are renewed in one statement for all local executions; one found
 * no longer held (cancelled, deleted, taken over) is stopped at once.
 */
export class ExecutionWorker {
  private readonly options: ExecutionWorkerOptions;
  private readonly loop: LeasedWorkLoop<RunnableExecution>;
  private readonly local = new Map<string, AbortController>();
  private readonly waiters = new Map<string, Set<() => void>>();
  private renewTimer: NodeJS.Timeout | undefined;
  private renewing: Promise<void> = Promise.resolve();

  constructor(options: ExecutionWorkerOptions) {
    this.options = options;
    this.loop = new LeasedWorkLoop({
      name: 'executions',
      claim: (limit) => options.leases.claim(limit),
      process: (execution, shutdown) => this.process(execution, shutdown),
      release: (execution) => options.leases.release(execution.id),
      concurrency: options.concurrency,
      pollIntervalMs: options.pollIntervalMs,
      logger: options.logger,
    });
  }

  start(): void {
    this.loop.start();
    this.renewTimer = setInterval(() => {
      this.renewing = this.renewing.then(() => this.renew());
    }, Math.max(200, Math.floor(this.options.leaseMs / 3)));
    this.renewTimer.unref();
  }

  /** Stops taking work; executions in flight get `graceMs` to finish, the rest are handed back. */
  async stop(graceMs: number): Promise<void> {
    clearInterval(this.renewTimer);
    await this.loop.stop(graceMs);
    await this.renewing;
  }

  /** An execution this runner accepted and leased to itself: runs it now, or hands it back for any runner. */
  async submit(execution: RunnableExecution): Promise<void> {
    if (this.loop.offer(execution)) return;
    await this.options.leases.release(execution.id);
    this.loop.wake();
  }

  /** Claims now rather than at the next poll: an execution was woken (a decision). */
  wake(): void {
    this.loop.wake();
  }

  /** Stops a local execution at once (it was cancelled here; the record is already written). */
  cancelLocal(executionId: string): void {
    this.local.get(executionId)?.abort(new ExecutionStop('cancelled'));
  }

  /** Resolves true when a local execution settles within `ms`, false otherwise (or when it is not local). */
  waitLocal(executionId: string, ms: number): Promise<boolean> {
    if (!this.local.has(executionId)) return Promise.resolve(false);
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.get(executionId)?.delete(done);
        resolve(true);
      };
      const timer = setTimeout(() => {
        this.waiters.get(executionId)?.delete(done);
        resolve(false);
      }, ms);
      let set = this.waiters.get(executionId);
      if (!set) this.waiters.set(executionId, (set = new Set()));
      set.add(done);
    });
  }

  private async process(execution: RunnableExecution, shutdown: AbortSignal): Promise<void> {
    const stop = new AbortController();
    const onShutdown = () => stop.abort(new ExecutionStop('shutdown'));
    shutdown.addEventListener('abort', onShutdown, { once: true });
    this.local.set(execution.id, stop);
    try {
      await this.options.runner.run(execution, stop.signal);
    } finally {
      shutdown.removeEventListener('abort', onShutdown);
      this.local.delete(execution.id);
      const waiting = this.waiters.get(execution.id);
      this.waiters.delete(execution.id);
      for (const resolve of waiting ?? []) resolve();
    }
  }

  private async renew(): Promise<void> {
    const ids = [...this.local.keys()];
    if (ids.length === 0) return;
    try {
      const held = await this.options.leases.renew(ids);
      for (const id of ids) if (!held.has(id)) this.local.get(id)?.abort(new ExecutionStop('lost'));
    } catch (error) {
      this.options.logger.warn({ err: error }, 'renewing execution leases failed; retrying');
    }
  }
}
