import { ACCESS, DomainError } from '@agent-platform/kit';
import { offeredItself, type ToolCallRequest, type ToolCalls, type ToolCallServices, type ToolKind, type ToolOutcome } from './tool-kind.js';

export interface AgentToolConfig {
  agent_id: string;
}

/**
 * `agent` tools (decisions §16): the arguments' `message` (else the arguments as JSON) is a turn of another agent of the tenant,
 * in a session of its own, whose run is a child of the caller's (trigger `agent`); its answer is
 * the result. It runs as the turn's principal, held to `POST /agents/{agent_id}/chat`'s rule.
 * Nesting deeper than 3, or an agent calling itself, is a failed call.
 */
export const agentTool: ToolKind<AgentToolConfig> = {
  label: 'Agent',
  summary: "sends the model's `message` to another agent of the tenant as a turn of its own (a child run); its answer is the result",
  configHelp: "{agent_id: an agent of the tenant, not the caller}; the arguments' `message` (else the arguments as JSON) is the turn's message",
  fields: [{ key: 'agent_id', label: 'Agent', input: 'agent' }],
  configKeys: ['agent_id'],
  schemas: 'own',
  platformAction: { route: 'POST /agents/:agent_id/chat', rule: ACCESS.agents.write },
  check(config, save) {
    if (typeof config.agent_id === 'string' && config.agent_id !== '') return Promise.resolve({ agent_id: config.agent_id });
    save.errors.add('config.agent_id', 'is required: the id of an agent of this tenant');
    return Promise.resolve({ agent_id: '' });
  },
  async confirm(config, save) {
    if (!(await save.services.agents.exists(save.actor, config.agent_id))) save.errors.add('config.agent_id', 'is not an agent of this tenant');
    return null;
  },
  visible: (config) => config,
  offered: (tool) => [offeredItself(tool)],
  calls: agentCalls,
};

/** The handler of agent tools' calls, given what they reach. */
export function agentCalls(services: Pick<ToolCallServices, 'agentTurns'>): ToolCalls {
  return { call: (request) => callAgent(request, services) };
}

async function callAgent(request: ToolCallRequest, services: Pick<ToolCallServices, 'agentTurns'>): Promise<ToolOutcome> {
  const { agent_id: agentId } = request.tool.config as AgentToolConfig;
  // The arguments' message; a tool with a schema of its own hands its arguments over whole, as JSON.
  const given = request.arguments['message'];
  const message = typeof given === 'string' && given.trim() !== '' ? given : JSON.stringify(request.arguments);
  if (!request.caller) return { status: 'failed', error: 'an agent tool is called from a turn only' };
  if (request.caller.agentId === agentId) return { status: 'failed', error: 'an agent cannot call itself' };
  try {
    const answer = await services.agentTurns().turn({ actor: request.actor, agentId, message, caller: request.caller, signal: request.signal, requestId: request.requestId });
    return { status: 'completed', result: { content: answer.content, run_id: answer.runId, session_id: answer.sessionId }, runId: answer.runId };
  } catch (error) {
    // What the other agent's turn was refused or failed with is the model's to read.
    if (error instanceof DomainError) return { status: 'failed', error: `agent ${agentId}: ${error.message}` };
    throw error;
  }
}
