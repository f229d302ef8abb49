import type { OutgoingCall } from '@agent-platform/kit/grpc';
import type { ChatResponse, StreamChatResponse } from '@agent-platform/proto/agents/v1/chat';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { callAs } from '../../../../../../http/calls.js';
import { clientFailure } from '../../../../../../http/errors.js';
import { openEventStream, sendEventStream } from '../../../../../../http/sse.js';
import { chatMessageBody, turnEvents } from './schemas.js';

/** A turn's two ways to be answered: whole, or as its events. */
export interface TurnCalls {
  whole(call: OutgoingCall): Promise<ChatResponse>;
  stream(call: OutgoingCall & { signal: AbortSignal }): AsyncIterable<StreamChatResponse>;
}

/**
 * Answers a chat turn (a new message, or a decision that continues one) as JSON or, with
 * `stream`, as server-sent events: one place for both routes that run turns.
 */
export async function answerTurn(
  request: FastifyRequest,
  reply: FastifyReply,
  stream: boolean | undefined,
  turn: TurnCalls,
): Promise<ReturnType<typeof chatMessageBody> | FastifyReply> {
  const { config } = request.server;
  // Waits for a language model (and tools), which have longer time-outs than other calls.
  const call = { ...callAs(request), deadlineMs: config.MODEL_DEADLINE_MS };
  if (stream !== true) return chatMessageBody(await turn.whole(call));

  // A client that goes away cancels the turn at once (the model request with it).
  const gone = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) gone.abort();
  });
  // Rejects, as an ordinary error response, when the turn fails before its first event.
  const body = await openEventStream(turnEvents(turn.stream({ ...call, signal: gone.signal })), {
    failure: (error) => ({ event: 'error', data: clientFailure(error, request, config.BODY_LIMIT_BYTES).body }),
  });
  return sendEventStream(reply, body);
}
