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
