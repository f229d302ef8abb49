import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { callAs } from '../../../../../../http/calls.js';
import { AgentParams } from '../../schemas.js';
import { errorResponses } from '../../../../../../http/error-responses.js';
import { TenantQuery } from '../../../../../../http/schemas.js';
import { runBody, RunPage, RunSchema, RunsQuery, StartRunBody } from '../../../runs/schemas.js';

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
  app.post(
    '',
    {
      schema: {
        operationId: 'startAgentRun',
        tags: ['runs'],
        summary: 'Start a background run: the turn is queued and runs without a connection held open',
        description:
          "Answers 202 with the run, queued; follow it with GET /runs/{run_id}/events or GET /runs/{run_id}. It is refused now as a chat turn would be (422, 404, 409, 402), and otherwise runs as the caller (decisions §12), charged as any turn. It survives the restart of any process: a queued run starts, and a running one is taken up again from the start when none of its tool calls had run, else it fails saying so; never lost, never charged twice. Emits run.completed or run.failed.",
        params: AgentParams,
        querystring: TenantQuery,
        body: StartRunBody,
        response: {
          202: RunSchema,
          ...errorResponses({
            not_found: 'No such agent, or session_id is not one of its sessions.',
            conflict: 'A tool call in the session awaits approval: decide it first.',
            insufficient_credits: 'The balance is below 1 credit.',
          }),
        },
      },
    },
    async (request, reply) => {
      const { message, session_id, user_id, agent_version } = request.body;
      const started = await app.agentMemory.runs.startRun({ agentId: request.params.agent_id, message, sessionId: session_id, userId: user_id, agentVersion: agent_version }, callAs(request));
      return reply.code(202).send(runBody(started.run));
    },
  );
  done();
};

export default agentRunRoutes;
