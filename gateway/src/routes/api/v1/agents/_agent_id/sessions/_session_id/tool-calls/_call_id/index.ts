import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { errorResponses } from '../../../../../../../../../http/error-responses.js';
import { decisionComment, pathId, TenantQuery } from '../../../../../../../../../http/schemas.js';
import { ChatMessageSchema, STREAM_DESCRIPTION } from '../../../../chat/schemas.js';
import { answerTurn } from '../../../../chat/turn-reply.js';
import { SessionParams } from '../../../schemas.js';

const ToolCallParams = SessionParams.extend({ call_id: pathId('tool call', 'call') });

const DecisionBody = z
  .object({
    comment: decisionComment('stored with the decision, and given to the model when it rejects the call'),
    stream: z.boolean().optional().describe('true: answer text/event-stream, as a streamed chat turn does.'),
  })
  // A bare POST decides too (Fastify reads no body as null): nothing in the body is required.
  .nullish()
  .meta({ examples: [{ comment: 'Refund approved by the support lead.' }] });

/** The two decisions (decisions §12), one route each, alike but for what they do to the call. */
const DECISIONS = [
  {
    path: '/approve',
    approve: true,
    operationId: 'approveToolCall',
    summary: 'Approve a tool call that awaits approval, run it, and continue the turn',
    description:
      'Runs the call, gives its result to the model and continues the turn, answered as a chat call is (JSON, or server-sent events with stream: true). When other calls of the same answer still await a decision, the answer is that message again, status awaiting_approval. Exactly one decision wins a call: any other, racing or later, is 409.',
  },
  {
    path: '/reject',
    approve: false,
    operationId: 'rejectToolCall',
    summary: 'Reject a tool call that awaits approval, and continue the turn without it',
    description:
      'The call is not run: the model is told it was rejected (with the comment) and the turn continues, answered as a chat call is (JSON, or server-sent events with stream: true). Exactly one decision wins a call: any other, racing or later, is 409.',
  },
] as const;

/** /agents/{agent_id}/sessions/{session_id}/tool-calls/{call_id}/approve and /reject. */
const toolCallRoutes: FastifyPluginCallbackZod = (app, _options, done) => {
  for (const decision of DECISIONS) {
    app.post(
      decision.path,
      {
        schema: {
          operationId: decision.operationId,
          tags: ['agents'],
          summary: decision.summary,
          description: decision.description,
          params: ToolCallParams,
          querystring: TenantQuery,
          body: DecisionBody,
          response: {
            200: {
              description: 'The continued turn: JSON, or with `stream: true` an event stream.',
              content: {
                'application/json': { schema: ChatMessageSchema },
                'text/event-stream': { schema: z.string().describe(STREAM_DESCRIPTION) },
              },
            },
            ...errorResponses({
              not_found: 'No such agent, session of it, or tool call in the session.',
              conflict: 'The call was already approved or rejected.',
              insufficient_credits: 'Approving continues the turn with a model call: the balance is below 1 credit. Nothing was decided.',
              upstream_error: 'The model failed or timed out after the decision; the call and its result are stored.',
            }),
          },
        },
      },
      async (request, reply) => {
        const { agent_id, session_id, call_id } = request.params;
        const { comment, stream } = request.body ?? {};
        const chosen = { agentId: agent_id, sessionId: session_id, callId: call_id, approve: decision.approve, comment };
        const chat = app.agentMemory.chat;
        return answerTurn(request, reply, stream, {
          whole: async (call) => {
            const { reply: answer } = await chat.decideToolCall(chosen, call);
            if (!answer) throw new Error('agent-memory answered a decision without its reply.');
            return answer;
          },
          stream: async function* (call) {
            for await (const { event } of chat.streamDecideToolCall(chosen, call)) if (event) yield event;
          },
        });
      },
    );
  }
  done();
};

export default toolCallRoutes;
