/** One fixed window: `limit` requests per `seconds`, aligned to multiples of `seconds` since the epoch. */
export interface RateWindow {
  seconds: number;
  /** Positive; unlimited windows are never passed to a store. */
  limit: number;
}

export interface WindowState {
  limit: number;
  /** Requests counted in the current window, this one included when it was counted. */
  count: number;
  remaining: number;
  /** Epoch seconds at which the current window ends. */
  resetAt: number;
}

export interface RateLimitOutcome {
  /** False when counting `cost` would take any window past its limit; nothing was counted then. */
  allowed: boolean;
  /** In the order of the windows asked for. */
  windows: WindowState[];
}

/**
 * Fixed-window counters. `consume` is atomic across windows and across gateway replicas sharing
 * a store: either every window counts the request or, when one is full, none does.
 */
export interface RateLimitStore {
  consume(key: string, windows: readonly RateWindow[], cost?: number): Promise<RateLimitOutcome>;
  /** The current counts, counting nothing; `allowed` tells whether one more request would be. */
  peek(key: string, windows: readonly RateWindow[]): Promise<RateLimitOutcome>;
  close(): Promise<void>;
}

/** Where the window containing `nowMs` starts and ends, epoch milliseconds. */
export function windowBounds(window: RateWindow, nowMs: number): { startMs: number; endMs: number } {
  const lengthMs = window.seconds * 1000;
  const startMs = Math.floor(nowMs / lengthMs) * lengthMs;
  return { startMs, endMs: startMs + lengthMs };
}

export function windowState(window: RateWindow, count: number, endMs: number): WindowState {
  return {
    limit: window.limit,
    count,
    remaining: Math.max(0, window.limit - count),
    resetAt: Math.ceil(endMs / 1000),
  };
}
