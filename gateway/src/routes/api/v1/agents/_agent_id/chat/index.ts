import type { StreamChatResponse } from '@agent-platform/proto/agents/v1/chat';
import type { FastifyReply } from 'fastify';
import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { callAs } from '../../../../../../http/calls.js';
import { errorResponses } from '../../../../../../http/error-responses.js';
import { clientFailure } from '../../../../../../http/errors.js';
import { TenantQuery } from '../../../../../../http/schemas.js';
import { openEventStream, type ServerSentEvent } from '../../../../../../http/sse.js';
import { AgentParams } from '../../schemas.js';
import { ChatBody, chatMessageBody, ChatMessageSchema, STREAM_DESCRIPTION } from './schemas.js';

/**
 * decisions §6's events of a streamed turn: a delta per text piece, then exactly one completed.
 * A stream that ends without its completed event is an upstream defect, reported as an error event.
 */
async function* turnEvents(events: AsyncIterable<StreamChatResponse>): AsyncGenerator<ServerSentEvent> {
  let completed = false;
  for await (const event of events) {
    if (completed) continue;
    if (event.completed) {
      completed = true;
      yield { event: 'message.completed', data: chatMessageBody(event.completed) };
    } else if (event.delta !== undefined) {
      yield { event: 'message.delta', data: { content: event.delta } };
    }
  }
  if (!completed) throw new Error('agent-memory ended a streamed chat turn without its completed event.');
}

/** /agents/{agent_id}/chat: one turn of a conversation with an agent, answered whole or streamed. */
const chatRoutes: FastifyPluginCallbackZod = (app, _options, done) => {
  app.post(
    '',
    {
      schema: {
        operationId: 'chatWithAgent',
        tags: ['agents'],
        summary: 'Send a message to an agent and get its reply, whole or as server-sent events',
        description:
          "The session's earlier turns and the agent's most relevant memories go into the model's context. A turn costs ceil(total_tokens / 1000) credits, at least 1: a balance below 1 is 402 insufficient_credits before any model call. A model failure or time-out is 502 upstream_error and costs nothing. Emits agent.message.created and agent.message.completed.",
        params: AgentParams,
        querystring: TenantQuery,
        body: ChatBody,
        response: {
          200: {
            description: 'The reply: JSON, or with `stream: true` an event stream.',
            content: {
              'application/json': { schema: ChatMessageSchema },
              'text/event-stream': { schema: z.string().describe(STREAM_DESCRIPTION) },
            },
          },
          ...errorResponses({
            not_found: 'No such agent, or session_id is not one of its sessions.',
            insufficient_credits: 'The balance is below 1 credit; nothing was sent to the model.',
            upstream_error: 'The model failed or timed out; nothing was stored or charged.',
          }),
        },
      },
    },
    async (request, reply) => {
      const { message, session_id, stream } = request.body;
      const turn = { agentId: request.params.agent_id, message, sessionId: session_id };
      // Waits for a language model, which has a longer time-out than other calls.
      const call = { ...callAs(request), deadlineMs: app.config.MODEL_DEADLINE_MS };
      if (stream !== true) return chatMessageBody(await app.agentMemory.chat.chat(turn, call));

      // A client that goes away cancels the turn at once (the model request with it).
      const gone = new AbortController();
      reply.raw.once('close', () => {
        if (!reply.raw.writableFinished) gone.abort();
      });
      // Rejects, as an ordinary error response, when the turn fails before its first event.
      const body = await openEventStream(turnEvents(app.agentMemory.chat.streamChat(turn, { ...call, signal: gone.signal })), {
        failure: (error) => ({ event: 'error', data: clientFailure(error, request, app.config.BODY_LIMIT_BYTES).body }),
      });
      // A stream body goes through reply.send (not reply.hijack), so the headers every response
      // carries (X-Request-Id, the rate-limit headers) and the onSend/onResponse hooks still apply.
      // The schema types the JSON reply; the event stream is a body of its own.
      return (reply as FastifyReply)
        .type('text/event-stream; charset=utf-8')
        .header('cache-control', 'no-cache')
        .header('x-accel-buffering', 'no')
        .send(body);
    },
  );
  done();
};

export default chatRoutes;
