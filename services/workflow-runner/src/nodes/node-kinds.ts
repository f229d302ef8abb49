import type { NodeKind } from './node-kind.js';
import { agentNode } from './agent.js';
import { approvalNode } from './approval.js';
import { conditionNode } from './condition.js';
import { integrationNode } from './integration.js';
import { scheduleNode } from './schedule.js';
import { waitNode } from './wait.js';
import { webhookNode } from './webhook.js';

/**
 * Every node type of decisions §7 and §13, in the order people read them. A new type is a module
 * beside these and a line here; `NodeType`, the graph's node union and the generated docs follow.
 */
export const NODE_KINDS = {
  webhook: webhookNode,
  schedule: scheduleNode,
  agent: agentNode,
  condition: conditionNode,
  integration: integrationNode,
  approval: approvalNode,
  wait: waitNode,
} as const;

export type NodeType = keyof typeof NODE_KINDS;
export const NODE_TYPES = Object.keys(NODE_KINDS) as NodeType[];

type ConfigOfKind<Kind> = Kind extends NodeKind<infer Config> ? Config : never;
export type NodeConfig<T extends NodeType> = ConfigOfKind<(typeof NODE_KINDS)[T]>;

/** A checked node of one type, before its failure policy. */
export type TypedNode<T extends NodeType = NodeType> = { [K in T]: { id: string; type: K; config: NodeConfig<K> } }[T];

/** The kind of a node, typed by the node's own config. */
export function kindOf<T extends NodeType>(node: TypedNode<T>): NodeKind<NodeConfig<T>> {
  return NODE_KINDS[node.type] as NodeKind<NodeConfig<T>>;
}

export const TRIGGER_NODE_TYPES = NODE_TYPES.filter((type) => NODE_KINDS[type].trigger);
