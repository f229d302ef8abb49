import { DomainError } from '@agent-platform/kit';
import type { AgentChat, GraphAuthor } from '../agents/agent-chat.js';
import { compileCondition, evaluateCondition, ExpressionError, type ExpressionScope } from '../expressions/expressions.js';
import { compileTemplate, renderValue } from '../expressions/template.js';
import { IntegrationError } from '../integrations/integration.js';
import type { Integrations } from '../integrations/integrations.js';
import type { AgentConfig, WorkflowNode } from '../workflows/graph.js';

export interface NodeContext {
  tenantId: string;
  /** Who saved the graph, on whose behalf agent nodes chat. */
  author: GraphAuthor;
  scope: ExpressionScope;
  /** Aborted on the node's time-out, a cancel, or the execution's end. */
  signal: AbortSignal;
  timeoutMs: number;
}

export interface NodeResult {
  output: unknown;
  /** A condition node's chosen target; null when no rule matched and there is no else. */
  choice?: string | null;
}

/** A node that failed for a reason its author can act on; the message is shown as the node's error. */
export class NodeFailure extends Error {
  override readonly name = 'NodeFailure';
}

export interface NodeRunnersOptions {
  agents: AgentChat;
  integrations: Integrations;
}

/** What each node type does. Trigger nodes pass the payload on; the rest are described per type. */
export class NodeRunners {
  private readonly options: NodeRunnersOptions;

  constructor(options: NodeRunnersOptions) {
    this.options = options;
  }

  /**
   * Nodes whose effects leave the platform: never run twice for one execution. An http GET is a
   * safe method (RFC 9110 §9.2.1), so a runner that takes an execution over may repeat it.
   */
  hasSideEffects(node: WorkflowNode): boolean {
    if (node.type === 'integration') return !(node.config.service === 'http' && node.config.method === 'GET');
    return node.type === 'agent';
  }

  async run(node: WorkflowNode, ctx: NodeContext): Promise<NodeResult> {
    try {
      switch (node.type) {
        case 'webhook':
        case 'schedule':
          return { output: ctx.scope.input };
        case 'condition':
          return this.condition(node.config.rules, ctx);
        case 'agent':
          return { output: await this.agent(node.config, ctx) };
        case 'integration': {
          const { service, timeout_ms: _timeout, ...settings } = node.config;
          const rendered = renderValue(settings, ctx.scope) as Record<string, unknown>;
          const output = await this.options.integrations.run({ service, ...rendered } as Parameters<Integrations['run']>[0], { signal: ctx.signal, timeoutMs: ctx.timeoutMs });
          return { output };
        }
        default:
          throw new NodeFailure(`unknown node type ${(node as { type: string }).type}`);
      }
    } catch (error) {
      throw asNodeFailure(error);
    }
  }

  /** decisions §7: the rules in order, the first true one wins, else the `else` target. */
  private condition(rules: readonly ({ if: string; goto: string } | { else: string })[], ctx: NodeContext): NodeResult {
    for (const [index, rule] of rules.entries()) {
      if ('else' in rule) return { output: { rule: 'else', target: rule.else }, choice: rule.else };
      const compiled = compileCondition(rule.if);
      if (typeof compiled === 'string') throw new NodeFailure(`rule ${index + 1}: ${compiled}`);
      let matched: boolean;
      try {
        matched = evaluateCondition(compiled, ctx.scope);
      } catch (error) {
        throw new NodeFailure(`rule ${index + 1}: ${error instanceof Error ? error.message : String(error)}`);
      }
      if (matched) return { output: { rule: index, target: rule.goto }, choice: rule.goto };
    }
    return { output: { rule: null, target: null }, choice: null };
  }

  /**
   * decisions §7: `config.message` (a template over input), else `input.message`, else the input's
   * JSON; as the end user `config.user_id` renders to (decisions §14), else none.
   */
  private async agent(config: AgentConfig, ctx: NodeContext): Promise<unknown> {
    let message: string;
    if (config.message !== undefined) {
      message = renderTemplate('message', config.message, ctx);
    } else {
      const input = ctx.scope.input;
      const given = typeof input === 'object' && input !== null ? (input as Record<string, unknown>).message : undefined;
      message = typeof given === 'string' ? given : JSON.stringify(input ?? {});
    }
    if (message.trim() === '') throw new NodeFailure('the message for the agent is empty');
    const userId = config.user_id === undefined ? undefined : renderTemplate('user_id', config.user_id, ctx);
    // An end user named by a template that found nothing would be a turn of nobody's, quietly.
    if (userId?.trim() === '') throw new NodeFailure(`user_id: ${config.user_id ?? ''} rendered nothing`);
    return this.options.agents.chat({ tenantId: ctx.tenantId, author: ctx.author, agentId: config.agent_id, message, userId, timeoutMs: ctx.timeoutMs, signal: ctx.signal });
  }
}

/** `text` rendered over the node's scope; a failure names the config key it came from. */
function renderTemplate(key: string, text: string, ctx: NodeContext): string {
  const template = compileTemplate(text);
  if (typeof template === 'string') throw new NodeFailure(`${key}: ${template}`);
  try {
    return template.render(ctx.scope);
  } catch (error) {
    throw error instanceof ExpressionError ? new NodeFailure(`${key}: ${error.message}`) : error;
  }
}

function asNodeFailure(error: unknown): unknown {
  if (error instanceof NodeFailure) return error;
  if (error instanceof ExpressionError || error instanceof IntegrationError) return new NodeFailure(error.message);
  if (error instanceof DomainError) {
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
  return error;
}
