import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { callAs } from '../../../../../../http/calls.js';
import { errorResponses } from '../../../../../../http/error-responses.js';
import { PageQuery, TenantQuery } from '../../../../../../http/schemas.js';
import { agentBody, AgentParams, AgentSchema, agentVersionBody, AgentVersionPage, AgentVersionParams, AgentVersionSchema, agentVersionSummaryBody } from '../../schemas.js';

/**
 * /agents/{agent_id}/versions (decisions §16): every set of settings the agent has had, newest
 * first, as workflows keep their graphs (§13.1). Reading them is reading the agent; restoring one
 * is changing it.
 */
const agentVersionRoutes: FastifyPluginCallbackZod = (app, _options, done) => {
  const tags = ['agents'];
  const notFound = errorResponses({ not_found: 'No such agent in the tenant, or no such version of it.' });

  app.get(
    '',
    {
      schema: {
        operationId: 'listAgentVersions',
        tags,
        summary: 'List the versions of an agent, newest first, without their settings',
        params: AgentParams,
        querystring: PageQuery,
        response: { 200: AgentVersionPage },
      },
    },
    async (request) => {
      const { page, per_page } = request.query;
      const answer = await app.agentMemory.agents.listAgentVersions({ agentId: request.params.agent_id, page: { page, perPage: per_page } }, callAs(request));
      return { items: answer.items.map(agentVersionSummaryBody), total: answer.total, page, per_page };
    },
  );

  app.get(
    '/:version',
    {
      schema: {
        operationId: 'getAgentVersion',
        tags,
        summary: 'Get one version of an agent with its settings (memory_types, config, tools)',
        params: AgentVersionParams,
        querystring: TenantQuery,
        response: { 200: AgentVersionSchema, ...notFound },
      },
    },
    async (request) => {
      const { agent_id, version } = request.params;
      return agentVersionBody((await app.agentMemory.agents.getAgentVersion({ agentId: agent_id, version }, callAs(request))).version);
    },
  );

  app.post(
    '/:version/restore',
    {
      schema: {
        operationId: 'restoreAgentVersion',
        tags,
        summary: "Make a new version whose settings are this version's; emits agent.updated",
        description:
          "The agent gets that version's memory_types, config and tools as the next version, as a PATCH of them would; restoring the current settings makes one too. Name, type and description stay. The settings are held to today's rules again: a tool deleted since is 422 naming tools[<index>], and one the credential may not use is 403, as on a PATCH.",
        params: AgentVersionParams,
        querystring: TenantQuery,
        response: {
          200: AgentSchema,
          ...notFound,
          ...errorResponses({ validation_error: 'The settings no longer pass: `details` names each field, e.g. tools[0] for a tool deleted since.' }),
        },
      },
    },
    async (request) => {
      const { agent_id, version } = request.params;
      return agentBody((await app.agentMemory.agents.restoreAgentVersion({ agentId: agent_id, version }, callAs(request))).agent);
    },
  );
  done();
};

export default agentVersionRoutes;
