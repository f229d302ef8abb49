import { context, ROOT_CONTEXT } from '@opentelemetry/api';
import type { Logger } from '../logger.js';
import { settlesWithin } from '../timeout.js';

export interface LeasedWorkLoopOptions<T> {
  /**
   * Leases up to `limit` items (at most `limit`; fewer or none when less is due). A claim holds
   * the item for a while only: if this process neither finishes nor releases it, the lease
   * expires and any replica may claim it again.
   */
  claim(limit: number): Promise<T[]>;
  /**
   * Does the work and records its outcome. Once called, the item is `process`'s to finish: when
   * `signal` aborts (stop ran past its grace) it should give up promptly and either release the
   * item itself or leave its lease to expire. A rejection is logged; the item is retried after
   * its lease expires.
   */
  process(item: T, signal: AbortSignal): Promise<void>;
  /**
   * Hands a claimed item back unprocessed, so it is due again at once for any replica instead of
   * after its lease. The loop calls it only for items it claimed but never gave to `process`.
   */
  release(item: T): Promise<void>;
  /** Items in `process` at once in this process. */
  concurrency: number;
  /** How often to look for work nobody called `wake()` about (other replicas' work, retries coming due). */
  pollIntervalMs: number;
  logger: Logger;
  /** Names the loop in its log lines. */
  name: string;
}

/**
 * Runs work leased from a durable queue (say, rows claimed with FOR UPDATE SKIP LOCKED and a lease
 * expiry), at most `concurrency` items at once. It claims when started, when woken, when a slot
 * comes free and every `pollIntervalMs`; an item this process leased itself can be `offer`ed.
 * Delivery is at least once: an item whose process dies, rejects or is aborted is claimed again
 * after its lease, so `process` must tolerate repeats.
 */
export class LeasedWorkLoop<T> {
  private readonly options: LeasedWorkLoopOptions<T>;
  private readonly log: Logger;
  private readonly tasks = new Set<Promise<void>>();
  private readonly shutdown = new AbortController();
  private running = false;
  private stopping: Promise<void> | undefined;
  /** The claim loop while it runs; at most one at a time. */
  private filling: Promise<void> | undefined;
  private wakeAgain = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(options: LeasedWorkLoopOptions<T>) {
    this.options = options;
    this.log = options.logger.child({ work_loop: options.name });
  }

  /** Items in `process` now. */
  get inFlight(): number {
    return this.tasks.size;
  }

  start(): void {
    if (this.stopping) throw new Error(`The ${this.options.name} work loop was stopped; build a new one.`);
    if (this.running) return;
    this.running = true;
    this.timer = setInterval(() => this.wake(), this.options.pollIntervalMs);
    this.timer.unref();
    this.wake();
  }

  /**
   * Starts an item this process already holds the lease of (it has just created it, say) without a
   * claim round trip, outside any trace context like claimed items. False when no slot is free or
   * the loop is not running: the item stays the caller's, to release or to leave for a claim.
   */
  offer(item: T): boolean {
    if (!this.running || this.tasks.size >= this.options.concurrency) return false;
    context.with(ROOT_CONTEXT, () => this.track(item));
    return true;
  }

  /** Looks for work now (some was queued, or a slot came free). */
  wake(): void {
    if (!this.running) return;
    if (this.filling) {
      this.wakeAgain = true;
      return;
    }
    // The claim loop serves every item, so it must not run in the trace of whatever woke it.
    this.filling = context.with(ROOT_CONTEXT, () => this.fill()).finally(() => {
      this.filling = undefined;
      // A wake that arrived after the loop's last look must not wait for the next poll.
      if (this.wakeAgain) this.wake();
    });
  }

  /**
   * Stops claiming and gives the claim under way and the items in `process` `graceMs` to finish;
   * then aborts the signal `process` was given and waits for what is left to settle. Items
   * claimed after this call are released, never processed. Calling it again waits for the same stop.
   */
  stop(graceMs: number): Promise<void> {
    this.stopping ??= this.drain(graceMs);
    return this.stopping;
  }

  private async drain(graceMs: number): Promise<void> {
    this.running = false;
    clearInterval(this.timer);
    const settled = this.settled();
    if (!(await settlesWithin(settled, graceMs))) {
      this.log.warn({ in_flight: this.tasks.size, grace_ms: graceMs }, 'work still running after the grace; aborting it');
      this.shutdown.abort();
      await settled;
    }
  }

  private async settled(): Promise<void> {
    // Nothing starts once running is false, so after the claim under way the set only shrinks.
    await this.filling;
    await Promise.allSettled([...this.tasks]);
  }

  private async fill(): Promise<void> {
    try {
      for (;;) {
        this.wakeAgain = false;
        const room = this.options.concurrency - this.tasks.size;
        if (!this.running || room <= 0) return;
        const claimed = await this.options.claim(room);
        if (!this.running) {
          // Stopped while claiming: hand them straight back rather than start work now.
          await this.releaseAll(claimed);
          return;
        }
        // Offers may have taken slots meanwhile (and a source may return more than asked): the cap holds.
        const free = Math.max(0, this.options.concurrency - this.tasks.size);
        for (const item of claimed.slice(0, free)) this.track(item);
        if (claimed.length > free) await this.releaseAll(claimed.slice(free));
        // A full batch may mean more is due; a short one means done, unless someone woke us meanwhile.
        if (claimed.length < room && !this.wakeAgain) return;
      }
    } catch (error) {
      // A failing source (the database is away, say) is retried at the poll, not at every wake.
      this.wakeAgain = false;
      this.log.error({ err: error }, 'claiming work failed; retrying on the next poll');
    }
  }

  private track(item: T): void {
    const task = this.run(item);
    this.tasks.add(task);
    void task.finally(() => {
      this.tasks.delete(task);
      this.wake();
    });
  }

  /** Never rejects: a failed item waits for its lease to expire and is claimed again. */
  private async run(item: T): Promise<void> {
    try {
      await this.options.process(item, this.shutdown.signal);
    } catch (error) {
      // Given up at a stop that ran past its grace, as asked: not a fault of the item's.
      if (this.shutdown.signal.aborted) this.log.warn({ err: error }, 'processing an item stopped with the process; it is retried when its lease expires');
      else this.log.error({ err: error }, 'processing an item failed; it is retried when its lease expires');
    }
  }

  private async releaseAll(items: readonly T[]): Promise<void> {
    const results = await Promise.allSettled(items.map(async (item) => this.options.release(item)));
    const failures = results.filter((result) => result.status === 'rejected');
    if (failures.length > 0) {
      this.log.warn({ err: failures[0]?.reason, count: failures.length }, 'releasing claimed items failed; they are due again when their leases expire');
    }
  }
}
