export { backoffDelay } from '../backoff.js';
export { sleep } from '../clock.js';
export { settlesWithin } from '../timeout.js';

/**
 * A counting semaphore: at most `limit` holders at once, the rest wait in arrival order. Also
 * tracks the work it admitted, so a stop can wait for what is still in flight.
 */
export class Slots {
  private free: number;
  private readonly waiting: (() => void)[] = [];
  private readonly running = new Set<Promise<unknown>>();

  constructor(limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`concurrency must be a positive integer, not ${limit}`);
    this.free = limit;
  }

  acquire(): Promise<void> {
    if (this.free > 0) {
      this.free -= 1;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.free += 1;
  }

  /** Runs `work` in a slot already acquired, releasing it when the work settles. */
  track(work: Promise<unknown>): void {
    const settled = work.then(
      () => undefined,
      () => undefined,
    );
    this.running.add(settled);
    void settled.then(() => {
      this.running.delete(settled);
      this.release();
    });
  }

  /** Settles when every tracked piece of work has. */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.all([...this.running]);
  }
}
