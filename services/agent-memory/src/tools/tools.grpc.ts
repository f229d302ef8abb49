import { parsePage } from '@agent-platform/kit';
import { actorOf, present, type Handlers } from '@agent-platform/kit/grpc';
import type { Tool as ToolMessage, ToolServiceService } from '@agent-platform/proto/agents/v1/tools';
import type { Tool } from './tools.entity.js';
import { ToolsService, type ToolRequest } from './tools.service.js';

export const TOOL_SERVICE_NAME = 'agentplatform.agents.v1.ToolService';

interface ToolFieldsMessage {
  name: string;
  description?: string | undefined;
  type: string;
  configJson?: string | undefined;
  inputSchemaJson?: string | undefined;
  requiresApproval?: boolean | undefined;
}

/** ToolService: translation only; ToolsService decides. */
export function toolHandlers(tools: ToolsService): Handlers<typeof ToolServiceService> {
  return {
    createTool: async (request, ctx) => ({ tool: toMessage(await tools.create(actorOf(ctx), toolRequest(request))) }),

    listTools: async (request, ctx) => {
      const { items, total } = await tools.list(actorOf(ctx), parsePage(request.page));
      return { tools: items.map(toMessage), total };
    },

    getTool: async (request, ctx) => ({ tool: toMessage(await tools.get(actorOf(ctx), request.toolId)) }),

    replaceTool: async (request, ctx) => ({ tool: toMessage(await tools.replace(actorOf(ctx), request.toolId, toolRequest(request))) }),

    deleteTool: async (request, ctx) => {
      await tools.delete(actorOf(ctx), request.toolId);
      return {};
    },

    refreshTool: async (request, ctx) => ({ tool: toMessage(await tools.refresh(actorOf(ctx), request.toolId)) }),
  };
}

function toolRequest(request: ToolFieldsMessage): ToolRequest {
  return {
    name: request.name,
    description: present(request.description),
    type: request.type,
    configJson: present(request.configJson),
    inputSchemaJson: present(request.inputSchemaJson),
    requiresApproval: request.requiresApproval,
  };
}

/** Header values never leave the service: they read "***". */
export function toMessage(tool: Tool): ToolMessage {
  return {
    id: tool.id,
    name: tool.name,
    description: tool.description ?? undefined,
    type: tool.type,
    configJson: JSON.stringify(ToolsService.visibleConfig(tool)),
    inputSchemaJson: JSON.stringify(tool.inputSchema),
    requiresApproval: tool.requiresApproval,
    createdAt: tool.createdAt,
    updatedAt: tool.updatedAt,
    discovered: (tool.discovered ?? []).map((remote) => ({
      name: remote.name,
      description: remote.description ?? undefined,
      inputSchemaJson: JSON.stringify(remote.input_schema),
    })),
  };
}
