import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { errorResponses } from '../../../../../../http/error-responses.js';
import { TenantQuery } from '../../../../../../http/schemas.js';
import { AgentParams } from '../../schemas.js';
import { ChatBody, ChatMessageSchema, STREAM_DESCRIPTION } from './schemas.js';
import { answerTurn } from './turn-reply.js';

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
          "The session's earlier turns and the agent's most relevant memories go into the model's context, and its tools are offered to the model: the calls it asks for run in parallel (each within TOOL_TIMEOUT_MS), their results go back to it, for at most the agent's max_tool_rounds rounds. A failed or timed-out call is given to the model as an error, never a 5xx. A call of a tool with requires_approval is not run: the turn stops with status awaiting_approval (approve or reject the call to continue it). Every model round costs ceil(total_tokens / 1000) credits, at least 1: a balance below 1 is 402 insufficient_credits before any model call. A model failure or time-out is 502 upstream_error and costs nothing. Emits agent.message.created, then agent.message.completed, or agent.tool_call.approval_requested for each call that awaits a decision.",
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
            conflict: 'A tool call in the session awaits approval (or still runs after one): decide it first.',
            insufficient_credits: 'The balance is below 1 credit; nothing was sent to the model.',
            upstream_error: 'The model failed or timed out; nothing was stored or charged.',
          }),
        },
      },
    },
    async (request, reply) => {
      const { message, session_id, user_id, agent_version, stream } = request.body;
      const turn = { agentId: request.params.agent_id, message, sessionId: session_id, userId: user_id, agentVersion: agent_version };
      const chat = app.agentMemory.chat;
      return answerTurn(request, reply, stream, { whole: (call) => chat.chat(turn, call), stream: (call) => chat.streamChat(turn, call) });
    },
  );
  done();
};

export default chatRoutes;
