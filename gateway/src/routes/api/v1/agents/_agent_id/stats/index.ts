import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { callAs } from '../../../../../../http/calls.js';
import { AgentParams } from '../../schemas.js';
import { AgentStatsSchema, statsBody, StatsQuery } from '../../../runs/schemas.js';

/** /agents/{agent_id}/stats: the agent's runs over a time range, summed (decisions §16). */
const agentStatsRoutes: FastifyPluginCallbackZod = (app, _options, done) => {
  app.get(
    '',
    {
      schema: {
        operationId: 'getAgentStats',
        tags: ['runs'],
        summary: "Sum an agent's runs over a time range: count, failure rate, p50/p95 duration, tokens, credits, feedback",
        description: 'Runs started in [since, until); by default the RUN_RETENTION_DAYS up to now.',
        params: AgentParams,
        querystring: StatsQuery,
        response: { 200: AgentStatsSchema },
      },
    },
    async (request) => {
      const { since, until } = request.query;
      return statsBody(await app.agentMemory.runs.getAgentRunStats({ agentId: request.params.agent_id, since, until }, callAs(request)));
    },
  );
  done();
};

export default agentStatsRoutes;
