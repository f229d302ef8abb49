/**
 * A call's stream of messages from the side that writes it to the side that reads it, whichever
 * way it flows: a server stream's answers from its handler to the caller, a client stream's
 * requests from the caller's source to the handler.
 */

/** Where a stream's messages go: `write` answers a promise when the reader is behind. */
export interface MessageSink {
  write(message: unknown): Promise<void> | undefined;
}

/**
 * Writes what `source` yields into `sink`, one message at a time, waiting while the reader is
 * behind: the source is read only as fast as the other side of the call reads. Once `stop` aborts
 * (the call ended), the pump stops at once, even while the source is producing a message, and
 * closes the source (its `return()`); nothing more is read from it. A source that throws rejects
 * with its error, unless the call had already ended and nobody waits for it.
 */
export async function pump(source: AsyncIterable<unknown>, sink: MessageSink, stop: AbortSignal): Promise<void> {
  const iterator = source[Symbol.asyncIterator]();
  const stopped = abortOf(stop);
  // Until the source ends or throws: a finished iterator needs no closing.
  let open = true;
  try {
    while (!stop.aborted) {
      const next = await Promise.race([stopped.promise, iterator.next()]);
      if (next === STOPPED) break;
      if (next.done) {
        open = false;
        return;
      }
      const behind = sink.write(next.value);
      if (behind) await Promise.race([behind, stopped.promise]);
    }
  } catch (error) {
    open = false;
    if (!stop.aborted) throw error;
  } finally {
    stopped.release();
    // Awaited, so a handler's generator has run its `finally` when its call's run ends. An async
    // generator busy with a message takes the `return()` once it yields it; the read it answers
    // was raced above, so its result is dropped, never written.
    if (open) await iterator.return?.();
  }
}

/**
 * The messages of `source` until `signal` aborts: then a read, even one already waiting for the
 * source, rejects with the signal's reason, and the source is closed.
 */
export async function* untilAborted<T>(source: AsyncIterable<T>, signal: AbortSignal): AsyncGenerator<T, void, undefined> {
  const iterator = source[Symbol.asyncIterator]();
  const aborted = abortOf(signal);
  let open = true;
  try {
    for (;;) {
      // Checked first: once the call is cancelled, not even a message already waiting is read.
      if (signal.aborted) throw signal.reason;
      const next = await Promise.race([aborted.promise, iterator.next()]);
      if (next === STOPPED) throw signal.reason;
      if (next.done) {
        open = false;
        return;
      }
      yield next.value;
    }
  } finally {
    aborted.release();
    // Not awaited: after an abort the source may still be waiting for a message that never comes.
    if (open) void Promise.resolve(iterator.return?.()).catch(() => undefined);
  }
}

const STOPPED = Symbol('stopped');

/** A promise that resolves to STOPPED when `signal` aborts; `release` drops the listener once it is not needed. */
function abortOf(signal: AbortSignal): { promise: Promise<typeof STOPPED>; release(): void } {
  let onAbort: () => void = () => undefined;
  const promise = new Promise<typeof STOPPED>((resolve) => (onAbort = () => resolve(STOPPED)));
  if (signal.aborted) onAbort();
  else signal.addEventListener('abort', onAbort, { once: true });
  return { promise, release: () => signal.removeEventListener('abort', onAbort) };
}
