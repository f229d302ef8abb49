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

/** True when `work` settles (either way) within `ms`, false when it does not (it keeps running). */
export async function settlesWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  const settled = work.then(
    () => true,
    () => true,
  );
  try {
    return await withTimeout(settled, ms);
  } catch (error) {
    if (error instanceof TimeoutError) return false;
    throw error;
  }
}
