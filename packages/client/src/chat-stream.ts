import type { EventSourceMessage } from 'eventsource-parser/stream';
import type { AgentPlatformClient } from './client.js';
import { serverSentEvents, type StreamAnswer } from './server-sent-events.js';
import type { ApiError, ChatMessage, ChatRequest, ToolCallDecision } from './types.js';

/** One event of a streamed chat turn (decisions §6, §12); each names the turn's run (§16). */
export type ChatStreamEvent =
  /** The model asked for a call of one of the agent's tools (before it runs, or awaits approval). */
  | { event: 'tool.call'; data: { id: string; name: string; arguments: unknown; run_id: string } }
  /** A call finished: its result, or why it failed or was rejected. */
  | {
      event: 'tool.result';
      data: ({ id: string; status: 'completed'; result: unknown } | { id: string; status: 'failed' | 'rejected'; error: string; error_code?: 'forbidden' | 'unauthorized' }) & { run_id: string };
    }
  /** A piece of the reply's text, in order. */
  | { event: 'message.delta'; data: { content: string; run_id: string } }
  /** The whole reply, exactly as the non-streamed call answers it (status awaiting_approval when it stopped at a call); the last event. */
  | { event: 'message.completed'; data: ChatMessage }
  /** The turn failed after the stream began; the last event. */
  | { event: 'error'; data: ApiError };

export interface StreamChatOptions {
  /** Aborting it stops the turn and closes the connection. */
  signal?: AbortSignal;
}

const EVENT_NAMES = new Set<string>(['tool.call', 'tool.result', 'message.delta', 'message.completed', 'error']);

/**
 * Sends a chat turn with `stream: true` through `client` (its base URL, credential and fetch) and
 * yields its events as they arrive, until the server ends the stream. Leaving the loop early
 * (`break`, `return`, a throw) cancels the body and aborts the request, which closes the
 * connection; the platform then neither stores nor charges the unfinished turn.
 *
 * A failure before the stream begins (404 agent, 402 credits, 422 body…) throws
 * {@link ApiResponseError}; one after it began is the `error` event.
 */
export function streamChat(client: AgentPlatformClient, agentId: string, body: ChatRequest, options: StreamChatOptions = {}): AsyncGenerator<ChatStreamEvent, void, undefined> {
  return streamTurn(
    (signal) =>
      client.POST('/api/v1/agents/{agent_id}/chat', {
        params: { path: { agent_id: agentId } },
        body: { ...body, stream: true },
        headers: { Accept: 'text/event-stream' },
        parseAs: 'stream',
        signal,
      }),
    options,
  );
}

/**
 * Approves or rejects a tool call that awaits approval (decisions §12) and yields the continued
 * turn's events as {@link streamChat} does: the call's result, then the rest of the turn.
 */
export function streamToolCallDecision(
  client: AgentPlatformClient,
  call: { agentId: string; sessionId: string; callId: string },
  decision: 'approve' | 'reject',
  body: ToolCallDecision = {},
  options: StreamChatOptions = {},
): AsyncGenerator<ChatStreamEvent, void, undefined> {
  const path = { agent_id: call.agentId, session_id: call.sessionId, call_id: call.callId };
  const headers = { Accept: 'text/event-stream' };
  return streamTurn(
    (signal) =>
      decision === 'approve'
        ? client.POST('/api/v1/agents/{agent_id}/sessions/{session_id}/tool-calls/{call_id}/approve', { params: { path }, body: { ...body, stream: true }, headers, parseAs: 'stream', signal })
        : client.POST('/api/v1/agents/{agent_id}/sessions/{session_id}/tool-calls/{call_id}/reject', { params: { path }, body: { ...body, stream: true }, headers, parseAs: 'stream', signal }),
    options,
  );
}

/** The events of a turn whose request `send` makes, read as the server sends them. */
async function* streamTurn(
  send: (signal: AbortSignal) => Promise<StreamAnswer>,
  options: StreamChatOptions,
): AsyncGenerator<ChatStreamEvent, void, undefined> {
  const aborter = new AbortController();
  const signal = options.signal ? AbortSignal.any([aborter.signal, options.signal]) : aborter.signal;
  try {
    for await (const message of serverSentEvents(await send(signal), 'streamChat')) {
      const event = chatEvent(message);
      if (event) yield event;
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
