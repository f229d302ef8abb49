import { EventSourceParserStream, type EventSourceMessage } from 'eventsource-parser/stream';
import { ApiResponseError, type AgentPlatformClient } from './client.js';
import type { ApiError, ChatMessage, ChatRequest } from './types.js';

/** One event of a streamed chat turn (decisions §6). */
export type ChatStreamEvent =
  /** A piece of the reply's text, in order. */
  | { event: 'message.delta'; data: { content: string } }
  /** The whole reply, exactly as the non-streamed call answers it; the last event. */
  | { event: 'message.completed'; data: ChatMessage }
  /** The turn failed after the stream began; the last event. */
  | { event: 'error'; data: ApiError };

export interface StreamChatOptions {
  /** Aborting it stops the turn and closes the connection. */
  signal?: AbortSignal;
}

const EVENT_NAMES = new Set<string>(['message.delta', 'message.completed', 'error']);

/**
 * Sends a chat turn with `stream: true` through `client` (its base URL, credential and fetch) and
 * yields its events as they arrive, until the server ends the stream. Leaving the loop early
 * (`break`, `return`, a throw) cancels the body and aborts the request, which closes the
 * connection; the platform then neither stores nor charges the unfinished turn.
 *
 * A failure before the stream begins (404 agent, 402 credits, 422 body…) throws
 * {@link ApiResponseError}; one after it began is the `error` event.
 */
export async function* streamChat(
  client: AgentPlatformClient,
  agentId: string,
  body: ChatRequest,
  options: StreamChatOptions = {},
): AsyncGenerator<ChatStreamEvent, void, undefined> {
  const aborter = new AbortController();
  const signal = options.signal ? AbortSignal.any([aborter.signal, options.signal]) : aborter.signal;
  try {
    const { data: stream, error, response } = await client.POST('/api/v1/agents/{agent_id}/chat', {
      params: { path: { agent_id: agentId } },
      body: { ...body, stream: true },
      headers: { Accept: 'text/event-stream' },
      parseAs: 'stream',
      signal,
    });
    if (!response.ok) throw new ApiResponseError(response, error);
    const type = response.headers.get('content-type') ?? '';
    if (!stream || !type.startsWith('text/event-stream')) throw new Error(`streamChat: expected a text/event-stream answer, got ${type || 'no body'}`);
    const reader = stream
      .pipeThrough(new TextDecoderStream())
      .pipeThrough(new EventSourceParserStream({ onError: 'terminate' }))
      .getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        const event = chatEvent(value);
        if (event) yield event;
      }
    } finally {
      await reader.cancel().catch(() => undefined);
    }
  } finally {
    // A no-op once the body was read to its end; otherwise it drops the connection.
    aborter.abort();
  }
}

/** The typed event, or undefined for an event type this client does not know (newer servers may add some). */
function chatEvent(message: EventSourceMessage): ChatStreamEvent | undefined {
  if (message.event === undefined || !EVENT_NAMES.has(message.event)) return undefined;
  return { event: message.event, data: JSON.parse(message.data) as unknown } as ChatStreamEvent;
}
