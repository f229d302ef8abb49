/** The workflow graph of decisions §7: nodes of the types in nodes/, their failure policy, edges. */
import type { TypedNode } from '../nodes/node-kinds.js';

export { NODE_TYPES, TRIGGER_NODE_TYPES, type NodeType, type NodeConfig } from '../nodes/node-kinds.js';
export type { AgentConfig } from '../nodes/agent.js';
export type { ApprovalConfig } from '../nodes/approval.js';
export type { ConditionConfig, ConditionRule } from '../nodes/condition.js';
export type { EmailConfig, HttpConfig, HttpMethod, IntegrationConfig, IntegrationService, SlackConfig } from '../nodes/integration.js';
export type { ScheduleConfig } from '../nodes/schedule.js';
export type { WaitConfig } from '../nodes/wait.js';
export type { WebhookConfig } from '../nodes/webhook.js';

export const MAX_NODES = 200;
/** A graph without cycles, self-loops or duplicates has at most n(n-1)/2 edges. */
export const MAX_EDGES = (MAX_NODES * (MAX_NODES - 1)) / 2;
export const MAX_ATTEMPTS = 10;
/** Retries wait inside the execution's time-out (default 5 min), so a longer first backoff could never be waited out. */
export const MAX_BACKOFF_SECONDS = 300;

/** decisions §13: a node's own failure handling, outside its config. */
export interface RetryPolicy {
  max_attempts: number;
  /** Before the second attempt; doubled before each later one. */
  backoff_seconds: number;
}

export const ON_ERROR = ['fail', 'continue'] as const;
export type OnError = (typeof ON_ERROR)[number];

/** Kept on a node only when given, so a saved graph reads back as it was written. */
export interface NodePolicy {
  retry?: RetryPolicy;
  on_error?: OnError;
}

export type WorkflowNode = NodePolicy & TypedNode;

export type NodeOfType<T extends WorkflowNode['type']> = Extract<WorkflowNode, { type: T }>;

export interface WorkflowEdge {
  source: string;
  target: string;
}

export type TriggerType = 'webhook' | 'schedule' | 'manual';

export interface WorkflowGraph {
  nodes: WorkflowNode[];
  edges: WorkflowEdge[];
}
