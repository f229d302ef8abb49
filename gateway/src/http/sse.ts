import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';

/** One server-sent event whose data is a JSON value; `id` lets a client resume after it (Last-Event-ID). */
export interface ServerSentEvent {
  event: string;
  data: unknown;
  id?: number;
}

/**
 * The `text/event-stream` framing of one event (WHATWG HTML, server-sent events): JSON text holds
 * no raw line break (JSON.stringify escapes them), so the data is always one `data:` line.
 */
export function sseFrame({ event, data, id }: ServerSentEvent): string {
  return `${id === undefined ? '' : `id: ${id}\n`}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

export interface EventStreamOptions {
  /** The last event after a failure once the stream has begun; the stream ends after it. */
  failure: (error: unknown) => ServerSentEvent;
}

/**
 * A response body relaying `source` as server-sent events, opened only once the first event
 * arrived: a failure before that rejects here, so the caller answers with an ordinary error
 * response (and its status) instead of a stream. A failure after it becomes one last event.
 *
 * The source is read one event at a time as the client takes them. When the response closes
 * early (the client went away), the body is destroyed and the source's iterator returned, which
 * for a gRPC server stream cancels the call (the chat route also cancels through the call's
 * abort signal, which lands at once, even while the iterator waits for its next message).
 */
export async function openEventStream(source: AsyncIterable<ServerSentEvent>, options: EventStreamOptions): Promise<Readable> {
  const iterator = source[Symbol.asyncIterator]();
  let pending: IteratorResult<ServerSentEvent> | undefined = await iterator.next();
  let finished = false;

  return new Readable({
    read() {
      const next = pending ? Promise.resolve(pending) : iterator.next();
      pending = undefined;
      next.then(
        (result) => {
          if (result.done) {
            finished = true;
            this.push(null);
          } else {
            this.push(sseFrame(result.value));
          }
        },
        (error: unknown) => {
          finished = true;
          this.push(sseFrame(options.failure(error)));
          this.push(null);
        },
      );
    },
    destroy(error, callback) {
      if (!finished) {
        finished = true;
        // Not awaited: a return queued behind a pending next() must not hold the response open.
        iterator.return?.().catch(() => undefined);
      }
      callback(error);
    },
  });
}

/**
 * Answers with an event stream body. Through reply.send (not reply.hijack), so the headers every
 * response carries (X-Request-Id, the rate-limit headers) and the onSend/onResponse hooks still apply.
 */
export function sendEventStream(reply: FastifyReply, body: Readable): FastifyReply {
  return reply.type('text/event-stream; charset=utf-8').header('cache-control', 'no-cache').header('x-accel-buffering', 'no').send(body);
}
