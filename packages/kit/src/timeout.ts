import { systemClock, type Clock } from './clock.js';

/** A bound was reached before the work settled; the work itself keeps running. */
export class TimeoutError extends Error {
  override readonly name = 'TimeoutError';
}

/**
 * The outcome of `work`, or a TimeoutError once `ms` pass first. The timer never outlives the race,
 * so a settled call leaves nothing behind that keeps the process alive.
 */
export async function withTimeout<T>(work: Promise<T>, ms: number, message = `no answer within ${ms} ms`): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new TimeoutError(message)), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * True when `work` settles (either way) within `ms` on `clock`, false when it does not (it keeps
 * running). Nothing is left waiting on the clock once it answers.
 */
export async function settlesWithin(work: Promise<unknown>, ms: number, clock: Clock = systemClock): Promise<boolean> {
  const answered = new AbortController();
  const outcome = await Promise.race([
    work.then(
      () => true,
      () => true,
    ),
    clock.sleep(ms, answered.signal).then(() => false),
  ]);
  answered.abort();
  return outcome;
}

/** What ends a piece of work: its caller's signal or its own bound, whichever comes first. */
export interface TimedSignal {
  readonly signal: AbortSignal;
  /** True once the bound, not the caller, ended the work. */
  readonly expired: boolean;
  /** Stops the clock and lets go of the caller's signal: call it when the work is over. */
  dispose(): void;
}

// setTimeout fires at once for a delay beyond a signed 32-bit count of milliseconds (~24.8 days).
const LONGEST_TIMER_MS = 2 ** 31 - 1;

/**
 * A signal that aborts when `parent` does (with its reason, or `reasons.parent` of it) or once
 * `ms` pass on `clock` (with `reasons.timeout()`): one controller and one timer, released by `dispose`.
 * AbortSignal.any over AbortSignal.timeout does the same with two more signals and a composite's
 * weak bookkeeping: on a workflow execution's hot path, 5–9 % of the platform's CPU per execution
 * (`BENCH_AB_ROUTE=hook pnpm bench:ab`: six rounds, each 0.84–0.99 of the CPU before).
 */
export function timedSignal(
  ms: number,
  parent: AbortSignal | undefined,
  reasons: { timeout: () => unknown; parent?: (reason: unknown) => unknown },
  clock: Clock = systemClock,
): TimedSignal {
  const controller = new AbortController();
  let expired = false;
  const cancelTimer = startTimer(clock, Math.max(0, ms), () => {
    if (controller.signal.aborted) return;
    expired = true;
    controller.abort(reasons.timeout());
  });
  const onParent = () => controller.abort(reasons.parent ? reasons.parent(parent?.reason) : parent?.reason);
  if (parent?.aborted) onParent();
  else parent?.addEventListener('abort', onParent, { once: true });
  return {
    signal: controller.signal,
    get expired() {
      return expired;
    },
    dispose() {
      cancelTimer();
      parent?.removeEventListener('abort', onParent);
    },
  };
}

/**
 * Calls `fire` once `ms` pass on `clock`; the answer cancels it. The system clock's is a bare timer,
 * not a sleep: a sleep's promise and cancelling signal would be more work on every bound of the hot path.
 */
function startTimer(clock: Clock, ms: number, fire: () => void): () => void {
  if (clock === systemClock) {
    const timer = setTimeout(fire, Math.min(ms, LONGEST_TIMER_MS));
    return () => clearTimeout(timer);
  }
  const cancelled = new AbortController();
  void clock.sleep(ms, cancelled.signal).then(() => {
    if (!cancelled.signal.aborted) fire();
  });
  return () => cancelled.abort();
}

/**
 * The promise's settlement, or a rejection with the signal's reason as soon as it aborts: a callee
 * that does not heed its signal (a unary gRPC call cannot be cancelled) cannot hold its caller. The
 * promise left behind is still observed, so its late rejection is never an unhandled one.
 */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      const reason: unknown = signal.reason;
      reject(reason instanceof Error ? reason : new Error('aborted', { cause: reason }));
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    // Cannot reject: both handlers settle the outer promise and return.
    void promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
