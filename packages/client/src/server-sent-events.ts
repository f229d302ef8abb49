import { EventSourceParserStream, type EventSourceMessage } from 'eventsource-parser/stream';
import { ApiResponseError } from './client.js';

/** A request the client made for an event stream, as openapi-fetch answers it with `parseAs: 'stream'`. */
export type StreamAnswer = { data?: ReadableStream<Uint8Array> | null | undefined; error?: unknown; response: Response };

/**
 * The messages of one server-sent event stream, in order, until the server ends it. An error
 * status throws {@link ApiResponseError}; leaving the loop early cancels the body. `what` names
 * the caller in the error an answer of another type gets.
 */
export async function* serverSentEvents(answer: StreamAnswer, what: string): AsyncGenerator<EventSourceMessage, void, undefined> {
  const { data: stream, error, response } = answer;
  if (!response.ok) throw new ApiResponseError(response, error);
  const type = response.headers.get('content-type') ?? '';
  if (!stream || !type.startsWith('text/event-stream')) throw new Error(`${what}: expected a text/event-stream answer, got ${type || 'no body'}`);
  // The cast: DOM's types give TextDecoderStream a writable side of any BufferSource, Node's of bytes.
  const reader = stream
    .pipeThrough(new TextDecoderStream() as ReadableWritablePair<string, Uint8Array>)
    .pipeThrough(new EventSourceParserStream({ onError: 'terminate' }))
    .getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}
