import { parsePage } from '@agent-platform/kit';
import { actorOf, present, type Handlers } from '@agent-platform/kit/grpc';
import {
  MemoryExtraction,
  type Agent as AgentMessage,
  type AgentConfig,
  type AgentServiceService,
  type AgentVersion as AgentVersionMessage,
} from '@agent-platform/proto/agents/v1/agents';
import type { AgentVersionSummary } from './agent-versions.repository.js';
import type { AgentRecord, AgentSettings, MemoryExtractionMode } from './agents.entity.js';
import { extractionModeOf, memoryExtractionOf, type AgentsService } from './agents.service.js';

const EXTRACTION_MESSAGES: Record<MemoryExtractionMode, MemoryExtraction> = {
  off: MemoryExtraction.MEMORY_EXTRACTION_OFF,
  per_user: MemoryExtraction.MEMORY_EXTRACTION_PER_USER,
  shared: MemoryExtraction.MEMORY_EXTRACTION_SHARED,
};

export const AGENT_SERVICE_NAME = 'agentplatform.agents.v1.AgentService';

/** AgentService: translation only; AgentsService decides. */
export function agentHandlers(agents: AgentsService): Handlers<typeof AgentServiceService> {
  return {
    createAgent: async (request, ctx) => {
      const agent = await agents.create(actorOf(ctx), {
        name: request.name,
        type: request.type,
        description: present(request.description),
        memoryTypes: request.memoryTypes,
        configJson: present(request.configJson),
        tools: request.tools,
      });
      return { agent: toMessage(agent) };
    },

    listAgents: async (request, ctx) => {
      const { items, total } = await agents.list(actorOf(ctx), parsePage(request.page));
      return { agents: items.map(toMessage), total };
    },

    getAgent: async (request, ctx) => ({ agent: toMessage(await agents.get(actorOf(ctx), request.agentId)) }),

    updateAgent: async (request, ctx) => {
      const agent = await agents.update(actorOf(ctx), request.agentId, {
        replace: request.replace,
        name: present(request.name),
        type: present(request.type),
        description: present(request.description),
        memoryTypes: request.setMemoryTypes ? request.memoryTypes : undefined,
        configJson: present(request.configJson),
        tools: request.setTools ? request.tools : undefined,
      });
      return { agent: toMessage(agent) };
    },

    deleteAgent: async (request, ctx) => {
      await agents.delete(actorOf(ctx), request.agentId);
      return {};
    },

    listAgentVersions: async (request, ctx) => {
      const { items, total } = await agents.listVersions(actorOf(ctx), request.agentId, parsePage(request.page));
      return { items: items.map(versionSummaryOf), total };
    },

    getAgentVersion: async (request, ctx) => {
      const version = await agents.getVersion(actorOf(ctx), request.agentId, request.version);
      const { memoryTypes, config, tools } = version;
      return { version: { ...versionSummaryOf(version), settings: { memoryTypes, config: configMessage(config), tools } } };
    },

    restoreAgentVersion: async (request, ctx) => ({ agent: toMessage(await agents.restoreVersion(actorOf(ctx), request.agentId, request.version)) }),
  };
}

function versionSummaryOf(version: AgentVersionSummary): AgentVersionMessage {
  return { version: version.version, createdAt: version.createdAt, createdBy: version.createdBy ?? undefined, settings: undefined };
}

export function toMessage(agent: AgentRecord): AgentMessage {
  return {
    id: agent.id,
    name: agent.name,
    type: agent.type,
    description: agent.description ?? undefined,
    memoryTypes: agent.memoryTypes,
    config: configMessage(agent.config),
    memoryExtraction: EXTRACTION_MESSAGES[memoryExtractionOf(agent)],
    tools: agent.tools,
    status: agent.status,
    version: agent.version,
    createdAt: agent.createdAt,
    updatedAt: agent.updatedAt,
  };
}

function configMessage(config: AgentSettings): AgentConfig {
  const { model, temperature, max_tokens, system_prompt, top_p, max_tool_rounds, memory_extraction } = config;
  const extraction = memory_extraction === undefined ? undefined : EXTRACTION_MESSAGES[extractionModeOf(memory_extraction)];
  return { model, temperature, maxTokens: max_tokens, systemPrompt: system_prompt, topP: top_p, maxToolRounds: max_tool_rounds, extraction };
}
