import type { EventSourceMessage } from 'eventsource-parser/stream';
import { ApiResponseError, type AgentPlatformClient } from './client.js';
import { serverSentEvents } from './server-sent-events.js';
import type { Run, RunStep } from './types.js';

/** One event of `GET /runs/{run_id}/events` (decisions §16); `id` is the event's place, to resume after. */
export type RunEvent =
  /** The run as it is when the stream opens from the start: no id (a stream resumed after an id does not repeat it). */
  | { event: 'run.status'; data: Run }
  /** A step as it was stored; its id is its place in the run. */
  | { event: 'run.step'; id: number; data: RunStep }
  /** How the run ended; the last event. */
  | { event: 'run.completed' | 'run.failed' | 'run.cancelled'; id: number; data: Run };

export interface FollowRunOptions {
  /** Starts after this event id (the last one a previous follow saw) instead of from the start. */
  after?: number;
  /** Aborting it stops following and closes the connection. */
  signal?: AbortSignal;
  /** How many times a stream that ends before the run does (a proxy's time-out, a restart) is opened again; default 5. */
  reconnects?: number;
  /** How long to wait before opening it again, in milliseconds; default 1,000. */
  reconnectDelayMs?: number;
}

const ENDS = new Set<string>(['run.completed', 'run.failed', 'run.cancelled']);
const KNOWN = new Set<string>(['run.status', 'run.step', ...ENDS]);

/**
 * Follows a run's events until it ends (a background run's, say: `POST /agents/{agent_id}/runs`
 * answers at once): its status, each step as it is stored, then its end. A stream that closes
 * before the run's end is opened again with `Last-Event-ID`, so no step is missed or repeated. An
 * error answer (404 run, 401) throws {@link ApiResponseError} at once; so does a network failure
 * once the reconnects are spent.
 */
export async function* followRun(client: AgentPlatformClient, runId: string, options: FollowRunOptions = {}): AsyncGenerator<RunEvent, void, undefined> {
  let after = options.after;
  let reconnects = options.reconnects ?? 5;
  for (;;) {
    const aborter = new AbortController();
    const signal = options.signal ? AbortSignal.any([aborter.signal, options.signal]) : aborter.signal;
    try {
      const answer = await client.GET('/api/v1/runs/{run_id}/events', {
        params: { path: { run_id: runId }, ...(after === undefined ? {} : { header: { 'last-event-id': String(after) } }) },
        headers: { Accept: 'text/event-stream' },
        parseAs: 'stream',
        signal,
      });
      for await (const message of serverSentEvents(answer, 'followRun')) {
        const event = runEvent(message);
        if (!event) continue;
        if ('id' in event) after = event.id;
        yield event;
        if (ENDS.has(event.event)) return;
      }
    } catch (error) {
      // The caller's abort and the API's refusals are final; a connection that failed is retried.
      if (options.signal?.aborted || error instanceof ApiResponseError || reconnects === 0) throw error;
    } finally {
      // A no-op once the body was read to its end; otherwise it drops the connection.
      aborter.abort();
    }
    if (reconnects === 0) throw new Error(`followRun: the stream of ${runId} closed before the run ended, ${options.reconnects ?? 5} times`);
    reconnects -= 1;
    await pause(options.reconnectDelayMs ?? 1_000, options.signal);
  }
}

/** The typed event, or undefined for an event type this client does not know (newer servers may add some). */
function runEvent(message: EventSourceMessage): RunEvent | undefined {
  if (message.event === undefined || !KNOWN.has(message.event)) return undefined;
  const data = JSON.parse(message.data) as unknown;
  if (message.event === 'run.status') return { event: 'run.status', data } as RunEvent;
  return { event: message.event, id: Number(message.id), data } as RunEvent;
}

/** Waits `ms`, or rejects with the signal's reason once it aborts (browsers have no timers/promises). */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    signal?.throwIfAborted();
    const abort = () => {
      clearTimeout(timer);
      reject(signal?.reason as Error);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', abort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', abort, { once: true });
  });
}
