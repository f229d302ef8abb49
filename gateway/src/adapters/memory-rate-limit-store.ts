import { windowBounds, windowState, type RateLimitOutcome, type RateLimitStore, type RateWindow } from './rate-limit-store.js';

export interface MemoryRateLimitStoreOptions {
  /** Epoch milliseconds; tests move time. */
  now?: () => number;
  /** How often expired counters are swept (milliseconds). */
  sweepIntervalMs?: number;
}

interface Counter {
  count: number;
  expiresAtMs: number;
}

/** In-process counters for a single gateway (the local mode); expired windows are swept. */
export class MemoryRateLimitStore implements RateLimitStore {
  private readonly counters = new Map<string, Counter>();
  private readonly now: () => number;
  private readonly sweeper: NodeJS.Timeout;

  constructor(options: MemoryRateLimitStoreOptions = {}) {
    this.now = options.now ?? Date.now;
    this.sweeper = setInterval(() => this.sweep(), options.sweepIntervalMs ?? 60_000);
    this.sweeper.unref();
  }

  consume(key: string, windows: readonly RateWindow[], cost = 1): Promise<RateLimitOutcome> {
    return Promise.resolve(this.apply(key, windows, cost, true));
  }

  peek(key: string, windows: readonly RateWindow[]): Promise<RateLimitOutcome> {
    return Promise.resolve(this.apply(key, windows, 1, false));
  }

  close(): Promise<void> {
    clearInterval(this.sweeper);
    this.counters.clear();
    return Promise.resolve();
  }

  /** Number of live counters; for tests of the sweep. */
  get size(): number {
    return this.counters.size;
  }

  sweep(): void {
    const nowMs = this.now();
    for (const [slot, counter] of this.counters) {
      if (counter.expiresAtMs <= nowMs) this.counters.delete(slot);
    }
  }

  private apply(key: string, windows: readonly RateWindow[], cost: number, count: boolean): RateLimitOutcome {
    const nowMs = this.now();
    const current = windows.map((window) => {
      const { endMs } = windowBounds(window, nowMs);
      const slot = this.slot(key, window, nowMs);
      const counter = this.counters.get(slot);
      const count = counter && counter.expiresAtMs > nowMs ? counter.count : 0;
      return { window, slot, endMs, count };
    });
    const allowed = current.every(({ window, count }) => count + cost <= window.limit);
    if (allowed && count) {
      for (const entry of current) {
        entry.count += cost;
        this.counters.set(entry.slot, { count: entry.count, expiresAtMs: entry.endMs });
      }
    }
    return { allowed, windows: current.map(({ window, count, endMs }) => windowState(window, count, endMs)) };
  }

  private slot(key: string, window: RateWindow, nowMs: number): string {
    return `${key}:${window.seconds}:${windowBounds(window, nowMs).startMs}`;
  }
}
