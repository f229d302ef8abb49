import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import type { UpdateAgentRequest } from '@agent-platform/proto/agents/v1/agents';
import type { z } from 'zod';
import { callAs } from '../../../../../http/calls.js';
import { SuccessSchema, TenantQuery } from '../../../../../http/schemas.js';
import { agentBody, AgentParams, AgentSchema, configJson, ReplaceAgentBody, UpdateAgentBody } from '../schemas.js';

/** /agents/{agent_id}: one agent. Another tenant's agent is 404, as an absent one. */
const agentItemRoutes: FastifyPluginCallbackZod = (app, _options, done) => {
  const tags = ['agents'];

  app.get(
    '',
    {
      schema: {
        operationId: 'getAgent',
        tags,
        summary: 'Get an agent with every field',
        params: AgentParams,
        querystring: TenantQuery,
        response: { 200: AgentSchema },
      },
    },
    async (request) => {
      const answer = await app.agentMemory.agents.getAgent({ agentId: request.params.agent_id }, callAs(request));
      return agentBody(answer.agent);
    },
  );

  app.patch(
    '',
    {
      schema: {
        operationId: 'updateAgent',
        tags,
        summary: 'Change an agent: only the fields sent change; emits agent.updated',
        description: 'The rules of creation apply to each field sent. memory_types, config and tools, when sent, replace the whole list or object.',
        params: AgentParams,
        querystring: TenantQuery,
        body: UpdateAgentBody,
        response: { 200: AgentSchema },
      },
    },
    async (request) => agentBody((await app.agentMemory.agents.updateAgent(updateOf(request.params.agent_id, request.body, false), callAs(request))).agent),
  );

  app.put(
    '',
    {
      schema: {
        operationId: 'replaceAgent',
        tags,
        summary: 'Replace an agent: name and type required, every field left out is reset; emits agent.updated',
        description: 'Reset means: description none (null), memory_types the default ["semantic", "episodic"], config {}, tools []. The id, status and created_at stay.',
        params: AgentParams,
        querystring: TenantQuery,
        body: ReplaceAgentBody,
        response: { 200: AgentSchema },
      },
    },
    async (request) => agentBody((await app.agentMemory.agents.updateAgent(updateOf(request.params.agent_id, request.body, true), callAs(request))).agent),
  );

  app.delete(
    '',
    {
      schema: {
        operationId: 'deleteAgent',
        tags,
        summary: 'Delete an agent with its sessions, messages, memory items and documents',
        params: AgentParams,
        querystring: TenantQuery,
        response: { 200: SuccessSchema },
      },
    },
    async (request) => {
      await app.agentMemory.agents.deleteAgent({ agentId: request.params.agent_id }, callAs(request));
      return { success: true as const, message: 'Agent deleted, with its sessions and memory.' };
    },
  );
  done();
};

export default agentItemRoutes;

/** PATCH and PUT send the same request; `replace` tells the service to reset what is left out. */
function updateOf(agentId: string, body: z.output<typeof UpdateAgentBody>, replace: boolean): UpdateAgentRequest {
  const { name, type, description, memory_types, config, tools } = body;
  return {
    agentId,
    replace,
    name,
    type,
    description,
    setMemoryTypes: memory_types !== undefined,
    memoryTypes: memory_types ?? [],
    configJson: configJson(config),
    setTools: tools !== undefined,
    tools: tools ?? [],
  };
}
