import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { callAs } from '../../../../../../http/calls.js';
import { errorResponses } from '../../../../../../http/error-responses.js';
import { TenantQuery } from '../../../../../../http/schemas.js';
import { ConsolidationSchema } from '../../../memory/schemas.js';
import { AgentParams } from '../../schemas.js';

/** /agents/{agent_id}/memory: operations on an agent's memory as a whole. */
const agentMemoryRoutes: FastifyPluginCallbackZod = (app, _options, done) => {
  app.post(
    '/consolidate',
    {
      schema: {
        operationId: 'consolidateAgentMemory',
        tags: ['memory'],
        summary: "Summarise the agent's older session messages into semantic memory now; emits memory.consolidated",
        description:
          "Each session's messages beyond its newest ones are summarised by the model into semantic memory items, so what was said long ago is still found by search. The agent must keep semantic memory (422 naming agent_id otherwise); a model failure is 502 upstream_error.",
        params: AgentParams,
        querystring: TenantQuery,
        response: { 200: ConsolidationSchema, ...errorResponses({ upstream_error: 'The model failed or timed out.' }) },
      },
    },
    async (request) => {
      const agentId = request.params.agent_id;
      // Waits for the language model, as a chat turn does.
      const answer = await app.agentMemory.memory.consolidateMemory({ agentId }, { ...callAs(request), deadlineMs: app.config.MODEL_DEADLINE_MS });
      return { agent_id: agentId, items_in: answer.itemsIn, items_out: answer.itemsOut };
    },
  );
  done();
};

export default agentMemoryRoutes;
