import type { ExpressionScope } from '../expressions/expressions.js';
import type { WaitStart } from '../nodes/node-kind.js';
import { kindOf, type NODE_KINDS } from '../nodes/node-kinds.js';
import type { NodeOfType, NodeType, WorkflowNode } from '../workflows/graph.js';

export { decisionOutput } from '../nodes/approval.js';
export type { WaitStart } from '../nodes/node-kind.js';

type WaitingType = { [T in NodeType]: (typeof NODE_KINDS)[T] extends { behaviour: { waits: true } } ? T : never }[NodeType];

/** decisions §13: nodes that park their execution until a decision or a time. */
export type WaitingNode = NodeOfType<WaitingType>;

export function isWaitingNode(node: WorkflowNode): node is WaitingNode {
  return kindOf(node).behaviour.waits;
}

/**
 * A waiting node as it is reached: when it wakes, and what it shows meanwhile; undefined for a
 * wait whose `until` has already passed (it completes at once with `dueOutput`).
 */
export function startWaiting(node: WaitingNode, scope: ExpressionScope, now: Date): WaitStart | undefined {
  const { behaviour } = kindOf(node);
  return behaviour.waits ? behaviour.start(node, scope, now) : undefined;
}

/** What a waiting node completes with when its time comes: an approval times out, a wait ends. */
export function dueOutput(node: WaitingNode, wakeAt: Date): unknown {
  const { behaviour } = kindOf(node);
  return behaviour.waits ? behaviour.due(node.config, wakeAt) : undefined;
}
