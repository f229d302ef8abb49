import { CHAT_MESSAGE_MAX, DomainError, isId } from '@agent-platform/kit';
import { fieldPath, onlyKeys, readString, readTimeout } from '../workflows/graph-fields.js';
import { NodeFailure, renderConfigTemplate, type NodeContext, type NodeKind, type NodeServices } from './node-kind.js';

export interface AgentConfig {
  agent_id: string;
  /** A template over the scope; absent: `input.message`, else the JSON of `input`. */
  message?: string;
  /**
   * A template over the scope naming the end user whose message the node handles (decisions
   * §14): the turn sees their memories and the shared ones, and its facts become theirs.
   */
  user_id?: string;
  timeout_ms?: number;
}

// The rendered end user is bound by the agent service (128 characters); its template may say more.
const MAX_USER_ID_TEMPLATE = 1_000;

export const agentNode: NodeKind<AgentConfig, false> = {
  summary: 'a chat turn with an agent of the tenant, as the end user its `user_id` template names',
  configHelp: '{agent_id, message?: template, user_id?: template naming the end user whose message it is (decisions §14), timeout_ms?}',
  trigger: false,
  check(config, ctx) {
    onlyKeys(config, ['agent_id', 'message', 'user_id', 'timeout_ms'], ctx, "an agent node's config");
    const agentId = readString(config, 'agent_id', ctx, { required: true, max: 100 });
    if (agentId !== undefined && !isId('agent', agentId)) ctx.errors.add(fieldPath(ctx, 'agent_id'), 'must be an agent id (agt_…)');
    const result: AgentConfig = { agent_id: agentId ?? '' };
    const message = readString(config, 'message', ctx, { required: false, max: CHAT_MESSAGE_MAX, template: true });
    if (message !== undefined) result.message = message;
    const userId = readString(config, 'user_id', ctx, { required: false, max: MAX_USER_ID_TEMPLATE, line: true, template: true });
    if (userId !== undefined) result.user_id = userId;
    const timeout = readTimeout(config, ctx);
    if (timeout !== undefined) result.timeout_ms = timeout;
    return result;
  },
  // A chat turn is charged and may call tools: it is not repeated.
  hasSideEffects: () => true,
  behaviour: {
    waits: false,
    async run(config, ctx, services) {
      try {
        return { output: await chat(config, ctx, services) };
      } catch (error) {
        throw error instanceof DomainError ? agentRefusal(error) : error;
      }
    },
  },
};

/**
 * decisions §7: `config.message` (a template over input), else `input.message`, else the input's
 * JSON; as the end user `config.user_id` renders to (decisions §14), else none.
 */
function chat(config: AgentConfig, ctx: NodeContext, services: NodeServices): Promise<unknown> {
  let message: string;
  if (config.message !== undefined) {
    message = renderConfigTemplate('message', config.message, ctx.scope);
  } else {
    const input = ctx.scope.input;
    const given = typeof input === 'object' && input !== null ? (input as Record<string, unknown>).message : undefined;
    message = typeof given === 'string' ? given : JSON.stringify(input ?? {});
  }
  if (message.trim() === '') throw new NodeFailure('the message for the agent is empty');
  const userId = config.user_id === undefined ? undefined : renderConfigTemplate('user_id', config.user_id, ctx.scope);
  // An end user named by a template that found nothing would be a turn of nobody's, quietly.
  if (userId?.trim() === '') throw new NodeFailure(`user_id: ${config.user_id ?? ''} rendered nothing`);
  return services.agents.chat({ tenantId: ctx.tenantId, author: ctx.author, agentId: config.agent_id, message, userId, timeoutMs: ctx.timeoutMs, signal: ctx.signal });
}

/** The agent service's refusal, as the node's author reads it. */
function agentRefusal(error: DomainError): NodeFailure {
  switch (error.code) {
    case 'insufficient_credits':
      return new NodeFailure(`insufficient credits: ${error.message}`);
    case 'not_found':
      return new NodeFailure(`the agent was not found in this tenant: ${error.message}`);
    case 'validation_error':
      return new NodeFailure(`the agent refused the message: ${[error.message, ...error.details.map((d) => `${d.field} ${d.message}`)].join('; ')}`);
    default:
      return new NodeFailure(`${error.code}: ${error.message}`);
  }
}
