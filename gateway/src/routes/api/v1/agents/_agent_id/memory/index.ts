import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { callAs } from '../../../../../../http/calls.js';
import { errorResponses } from '../../../../../../http/error-responses.js';
import { TenantQuery } from '../../../../../../http/schemas.js';
import { ConsolidateBody, ConsolidationSchema } from '../../../memory/schemas.js';
import { AgentParams } from '../../schemas.js';

/** /agents/{agent_id}/memory: operations on an agent's memory as a whole. */
const agentMemoryRoutes: FastifyPluginCallbackZod = (app, _options, done) => {
  app.post(
    '/consolidate',
    {
      schema: {
        operationId: 'consolidateAgentMemory',
        tags: ['memory'],
        summary: "Summarise the agent's session messages into semantic memory now; emits memory.consolidated",
        description:
          "Every session's messages not yet consolidated, the newest included (keep_messages leaves that many of each session's newest alone), are summarised by the model into semantic memory items, so what was said long ago is still found by search. A summary belongs to the session's end user (user_id) and is recorded in history with its session. The agent must keep semantic memory (422 naming agent_id otherwise); a model failure is 502 upstream_error.",
        params: AgentParams,
        querystring: TenantQuery,
        body: ConsolidateBody,
        response: { 200: ConsolidationSchema, ...errorResponses({ upstream_error: 'The model failed or timed out.' }) },
      },
    },
    async (request) => {
      const agentId = request.params.agent_id;
      // Waits for the language model, as a chat turn does.
      const keepMessages = request.body?.keep_messages;
      const answer = await app.agentMemory.memory.consolidateMemory({ agentId, keepMessages }, { ...callAs(request), deadlineMs: app.config.MODEL_DEADLINE_MS });
      return { agent_id: agentId, items_in: answer.itemsIn, items_out: answer.itemsOut };
    },
  );
  done();
};

export default agentMemoryRoutes;
