import type { Actor } from '@agent-platform/kit';
import type { TurnTools } from '../chat/chat.service.js';
import { toolKindOf } from './kinds/tool-kinds.js';
import type { OfferedTool, ToolRunner } from './tool-runner.js';
import type { ToolsRepository } from './tools.repository.js';

/** Runs one call of a tool, whatever its type; never rejects. */
export type ToolCaller = Pick<ToolRunner, 'run'>;

/** An agent's tools as a chat turn sees them: read from the tenant's tools, offered, run. */
export class AgentTools implements TurnTools {
  constructor(
    private readonly tools: ToolsRepository,
    private readonly caller: ToolCaller,
  ) {}

  /** In the agent's order; a name offered twice (two MCP servers' tools) is offered once, the first. */
  async offer(actor: Actor, toolIds: readonly string[]): Promise<OfferedTool[]> {
    const found = new Map((await this.tools.findMany(actor.tenantId, toolIds)).map((tool) => [tool.id, tool]));
    const offered = new Map<string, OfferedTool>();
    for (const id of toolIds) {
      const tool = found.get(id);
      if (!tool) continue;
      for (const one of toolKindOf(tool.type).offered(tool)) if (!offered.has(one.name)) offered.set(one.name, one);
    }
    return [...offered.values()];
  }

  run(call: Parameters<TurnTools['run']>[0]): ReturnType<TurnTools['run']> {
    const { actor, offered, arguments: args, signal, requestId, caller } = call;
    return this.caller.run({ actor, tool: offered.tool, remoteName: offered.remoteName, arguments: args, signal, requestId, caller });
  }
}
