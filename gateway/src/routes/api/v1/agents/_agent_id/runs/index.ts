import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { callAs } from '../../../../../../http/calls.js';
import { AgentParams } from '../../schemas.js';
import { runBody, RunPage, RunsQuery } from '../../../runs/schemas.js';

/** /agents/{agent_id}/runs: the agent's turns, whatever started them (decisions §16). */
const agentRunRoutes: FastifyPluginCallbackZod = (app, _options, done) => {
  app.get(
    '',
    {
      schema: {
        operationId: 'listAgentRuns',
        tags: ['runs'],
        summary: "List an agent's runs, newest first, cursor-paged, with filters",
        description: 'Without their steps (GET /runs/{run_id} has them). Runs older than RUN_RETENTION_DAYS (default 30) are deleted.',
        params: AgentParams,
        querystring: RunsQuery,
        response: { 200: RunPage },
      },
    },
    async (request) => {
      const { limit, cursor, status, trigger, user_id, session_id, since, until, min_duration_ms } = request.query;
      const answer = await app.agentMemory.runs.listRuns(
        {
          agentId: request.params.agent_id,
          page: { limit, cursor },
          status,
          trigger,
          userId: user_id,
          sessionId: session_id,
          since,
          until,
          // 0, the default, filters nothing: runs still going have no duration yet.
          minDurationMs: min_duration_ms === 0 ? undefined : min_duration_ms,
        },
        callAs(request),
      );
      return { items: answer.items.map(runBody), total: answer.total, next_cursor: answer.nextCursor || null };
    },
  );
  done();
};

export default agentRunRoutes;
