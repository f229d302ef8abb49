import type { Clock } from '../clock.js';

interface Sleeper {
  due: number;
  wake: () => void;
}

/**
 * A clock for tests: time moves only when `advance` is called, and `untilSleeping` tells when the
 * code under test has started to wait on it, so a test can move time at that moment.
 */
export class ManualClock implements Clock {
  private current: number;
  private sleepers: Sleeper[] = [];
  private watchers: { count: number; notice: () => void }[] = [];

  constructor(start = Date.UTC(2025, 0, 1)) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  /** Ends at once for `ms` ≤ 0, as no time need pass: a zero back-off does not wait for the test to move time. */
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted || ms <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const sleeper: Sleeper = {
        due: this.current + ms,
        wake: () => {
          this.sleepers = this.sleepers.filter((other) => other !== sleeper);
          signal?.removeEventListener('abort', sleeper.wake);
          resolve();
        },
      };
      this.sleepers.push(sleeper);
      signal?.addEventListener('abort', sleeper.wake, { once: true });
      this.watchers = this.watchers.filter((watcher) => {
        if (this.sleepers.length < watcher.count) return true;
        watcher.notice();
        return false;
      });
    });
  }

  /** How many waits are pending on this clock. */
  get sleeping(): number {
    return this.sleepers.length;
  }

  /**
   * Resolves once at least `count` waits are pending on this clock (at once when they already are):
   * more than one when the code under test keeps a wait of its own throughout, a bound, say.
   */
  untilSleeping(count = 1): Promise<void> {
    if (this.sleepers.length >= count) return Promise.resolve();
    return new Promise((resolve) => this.watchers.push({ count, notice: resolve }));
  }

  /** Moves time forward by `ms`, ending every wait that falls due, earliest first. */
  advance(ms: number): void {
    this.current += ms;
    const due = this.sleepers.filter((sleeper) => sleeper.due <= this.current).sort((a, b) => a.due - b.due);
    for (const sleeper of due) sleeper.wake();
  }
}
