import type { ExpressionScope } from '../expressions/expressions.js';
import { compileTemplate } from '../expressions/template.js';
import type { NodeOfType, WorkflowNode } from '../workflows/graph.js';
import { NodeFailure } from './node-runners.js';

/** decisions §13: nodes that park their execution until a decision or a time. */
export type WaitingNode = NodeOfType<'approval'> | NodeOfType<'wait'>;

export function isWaitingNode(node: WorkflowNode): node is WaitingNode {
  return node.type === 'approval' || node.type === 'wait';
}

/** What a waiting node shows while it waits, and what `workflow.execution.waiting` says of it. */
export interface WaitStart {
  wakeAt: Date;
  output: unknown;
  /** For approvals: the event's data (people are to be told). */
  announce?: { node_id: string; message: string; expires_at: string };
}

/**
 * A waiting node as it is reached: when it wakes, and what it shows meanwhile; undefined for a
 * wait whose `until` has already passed (it completes at once with `dueOutput`).
 */
export function startWaiting(node: WaitingNode, scope: ExpressionScope, now: Date): WaitStart | undefined {
  if (node.type === 'approval') {
    const wakeAt = new Date(now.getTime() + node.config.timeout_seconds * 1_000);
    const message = renderMessage(node.config.message, scope);
    return { wakeAt, output: { message, expires_at: wakeAt.toISOString() }, announce: { node_id: node.id, message, expires_at: wakeAt.toISOString() } };
  }
  const wakeAt = 'seconds' in node.config ? new Date(now.getTime() + node.config.seconds * 1_000) : new Date(node.config.until);
  if (wakeAt.getTime() <= now.getTime()) return undefined;
  return { wakeAt, output: { until: wakeAt.toISOString() } };
}

/** What a waiting node completes with when its time comes: an approval times out, a wait ends. */
export function dueOutput(node: WaitingNode, wakeAt: Date): unknown {
  return node.type === 'approval' ? { approved: false, timed_out: true } : { until: wakeAt.toISOString() };
}

/** decisions §13: the output of an approval node someone decided. */
export function decisionOutput(approved: boolean, decidedBy: string, comment: string | null, decidedAt: Date): unknown {
  return { approved, decided_by: decidedBy, comment, decided_at: decidedAt.toISOString() };
}

function renderMessage(message: string, scope: ExpressionScope): string {
  if (message === '') return '';
  const template = compileTemplate(message);
  if (typeof template === 'string') throw new NodeFailure(template);
  return template.render(scope);
}
