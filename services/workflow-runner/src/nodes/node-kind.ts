import type { AgentChat, GraphAuthor } from '../agents/agent-chat.js';
import { ExpressionError, type ExpressionScope } from '../expressions/expressions.js';
import { compileTemplate } from '../expressions/template.js';
import type { Integrations } from '../integrations/integrations.js';
import type { ConfigContext, JsonObject } from '../workflows/graph-fields.js';

/**
 * What one node type is, in one module (nodes/<type>.ts): its config, how it is checked, what it
 * does when reached, and how it is described to people. The runner, the graph checks and the
 * generated docs (`pnpm kinds`) read node types only through NODE_KINDS.
 */
export interface NodeKind<Config, Waits extends boolean = boolean> {
  /** One line for the README's node table and the console: what the node does. */
  summary: string;
  /** Its config for the OpenAPI document: keys, defaults and bounds. */
  configHelp: string;
  /** A trigger starts executions: at most one per graph, and no edge leads to it. */
  trigger: boolean;
  /** The typed config; problems go to ctx.errors with a path under ctx.path. */
  check(config: JsonObject, ctx: ConfigContext): Config;
  /**
   * Whether running it acts outside the platform: such a node is never run twice for one
   * execution, so its record is written before the execution goes on.
   */
  hasSideEffects(config: Config): boolean;
  /** For a node that chooses branches: the node ids it may choose, which count as edges. */
  targets?(config: Config): string[];
  behaviour: Waits extends true ? WaitingNode<Config> : RunningNode<Config>;
}

/** A node that does its work while the execution runs. */
export interface RunningNode<Config> {
  waits: false;
  run(config: Config, ctx: NodeContext, services: NodeServices): Promise<NodeResult>;
}

/** decisions §13: a node that parks its execution until a decision or a time. */
export interface WaitingNode<Config> {
  waits: true;
  /** When it wakes and what it shows meanwhile; undefined when its time has already come. */
  start(node: { id: string; config: Config }, scope: ExpressionScope, now: Date): WaitStart | undefined;
  /** What it completes with when its time comes. */
  due(config: Config, wakeAt: Date): unknown;
}

/** What a waiting node shows while it waits, and what `workflow.execution.waiting` says of it. */
export interface WaitStart {
  wakeAt: Date;
  output: unknown;
  /** For approvals: the event's data (people are to be told). */
  announce?: { node_id: string; message: string; expires_at: string };
}

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
  /** A branching node's chosen target; null when it chose none. */
  choice?: string | null;
}

/** What running nodes reach outside the runner. */
export interface NodeServices {
  agents: AgentChat;
  integrations: Integrations;
}

/** A node that failed for a reason its author can act on; the message is shown as the node's error. */
export class NodeFailure extends Error {
  override readonly name = 'NodeFailure';
}

/** `text` rendered over `scope`; a failure names the config key it came from. */
export function renderConfigTemplate(key: string, text: string, scope: ExpressionScope): string {
  const template = compileTemplate(text);
  if (typeof template === 'string') throw new NodeFailure(`${key}: ${template}`);
  try {
    return template.render(scope);
  } catch (error) {
    throw error instanceof ExpressionError ? new NodeFailure(`${key}: ${error.message}`) : error;
  }
}

/** Trigger nodes hand the payload that started the execution on as their output. */
export const passInput: RunningNode<unknown> = { waits: false, run: (_config, ctx) => Promise.resolve({ output: ctx.scope.input }) };
