import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { callAs } from '../../../../http/calls.js';
import { PageQuery, TenantQuery } from '../../../../http/schemas.js';
import { agentBody, AgentPage, AgentSchema, configJson, CreateAgentBody } from './schemas.js';

/**
 * /agents: the tenant's agents, kept by the agent-memory service. Anyone in the tenant reads them
 * (keys: agents:read); members and above create and change them (keys: agents:write).
 */
const agentRoutes: FastifyPluginCallbackZod = (app, _options, done) => {
  app.get(
    '',
    {
      schema: {
        operationId: 'listAgents',
        tags: ['agents'],
        summary: 'List the agents of the tenant, newest first',
        querystring: PageQuery,
        response: { 200: AgentPage },
      },
    },
    async (request) => {
      const { page, per_page } = request.query;
      const answer = await app.agentMemory.agents.listAgents({ page: { page, perPage: per_page } }, callAs(request));
      return { agents: answer.agents.map(agentBody), total: answer.total, page, per_page };
    },
  );

  app.post(
    '',
    {
      schema: {
        operationId: 'createAgent',
        tags: ['agents'],
        summary: 'Create an agent; emits agent.created',
        description:
          'type is 1..64 characters of a-z, 0-9, _ and -; memory_types a subset of semantic, episodic, procedural; config keys model, temperature (0..2), max_tokens, system_prompt, top_p (0..1) and no other; tools the ids of tools of the tenant. Breaking these is 422 validation_error naming each field (config.<key> for a config key).',
        querystring: TenantQuery,
        body: CreateAgentBody,
        response: { 201: AgentSchema },
      },
    },
    async (request, reply) => {
      const { name, type, description, memory_types, config, tools } = request.body;
      const created = await app.agentMemory.agents.createAgent(
        { name, type, description, memoryTypes: memory_types ?? [], configJson: configJson(config), tools: tools ?? [] },
        callAs(request),
      );
      return reply.code(201).send(agentBody(created.agent));
    },
  );
  done();
};

export default agentRoutes;
