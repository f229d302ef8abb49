/**
 * Where a component reads the time and waits: the system's by default. A component that bounds or
 * delays its work (a time-out, a back-off, a window) takes one, so a test can move time by hand
 * instead of living through it.
 */
export interface Clock {
  /** Milliseconds since the epoch, as Date.now(). */
  now(): number;
  /** Resolves after `ms`, or at once when `signal` aborts (it never rejects: callers check their own state). */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** Waits `ms` of real time, or less when `signal` aborts (it never rejects: callers check their own state). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) {
      resolve();
      return;
    }
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

export const systemClock: Clock = { now: () => Date.now(), sleep };
