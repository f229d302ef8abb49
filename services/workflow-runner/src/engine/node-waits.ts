import { newEvent } from '@agent-platform/kit/events';
import type { ExpressionScope } from '../expressions/expressions.js';
import type { RunnableExecution } from '../executions/execution-store.js';
import type { NodeRecord } from '../executions/node-records.js';
import type { WaitingExecutions } from '../executions/waiting-executions.js';
import { settled, type Settled } from './node-attempts.js';
import { dueOutput, isWaitingNode, startWaiting, type WaitingNode } from './waiting-nodes.js';

/**
 * The nodes of one run that wait for a decision or a time (decisions §13), with when each wakes:
 * reaching one, completing those whose time has come when the run resumes, and failing the rest
 * when the execution ends without them.
 */
export class NodeWaits {
  private readonly wakeAts = new Map<string, Date>();

  /** `recorded`: the run's node records by node id, which settling due nodes updates. */
  constructor(
    private readonly execution: RunnableExecution,
    private readonly recorded: Map<string, NodeRecord>,
    private readonly waiting: WaitingExecutions,
  ) {}

  get any(): boolean {
    return this.wakeAts.size > 0;
  }

  add(nodeId: string, wakeAt: Date): void {
    this.wakeAts.set(nodeId, wakeAt);
  }

  /** When the parked execution is to wake unless a decision wakes it first: its earliest node's time. */
  earliest(): Date {
    return new Date(Math.min(...[...this.wakeAts.values()].map((time) => time.getTime())));
  }

  /** An approval or wait node reached at `now`: it waits (announced, for an approval) or, already due, completes. */
  begin(node: WaitingNode, scope: ExpressionScope, now: Date): Settled {
    const times = { startedAt: now, completedAt: now };
    let start;
    try {
      start = startWaiting(node, scope, now);
    } catch (error) {
      return settled(node, times, { failed: error instanceof Error ? error.message : String(error) }, 1);
    }
    if (start === undefined) return settled(node, times, { output: dueOutput(node, now) }, 1);
    const record: NodeRecord = { nodeId: node.id, status: 'waiting', startedAt: now, completedAt: null, durationMs: null, output: start.output, error: null, attempts: 1, wakeAt: start.wakeAt };
    if (start.announce === undefined) return { node, record };
    const data = { execution_id: this.execution.id, workflow_id: this.execution.workflowId, ...start.announce };
    return { node, record, announce: newEvent('workflow.execution.waiting', this.execution.tenantId, data, now) };
  }

  /**
   * Waiting nodes whose time has come by `now` (an approval timed out, a wait ended) complete,
   * unless a decision reached them first; false when this runner no longer holds the execution.
   */
  async settleDue(now: Date): Promise<boolean> {
    for (const record of this.recorded.values()) {
      if (record.status !== 'waiting' || record.wakeAt === null || record.wakeAt > now) continue;
      const node = this.execution.graph.nodes.find((candidate) => candidate.id === record.nodeId);
      if (node === undefined || !isWaitingNode(node)) continue;
      const standing = await this.waiting.settleWaiting(this.execution.id, {
        ...record,
        status: 'completed',
        completedAt: now,
        durationMs: record.startedAt === null ? null : now.getTime() - record.startedAt.getTime(),
        output: dueOutput(node, record.wakeAt),
        wakeAt: null,
      });
      if (standing === undefined) return false;
      this.recorded.set(record.nodeId, standing);
    }
    return true;
  }

  /** The execution ends: every node still waiting fails with `reason`, so none is left to decide. */
  end(reason: string, now: Date): NodeRecord[] {
    const records = [...this.wakeAts.keys()].map((nodeId): NodeRecord => {
      const record = this.recorded.get(nodeId);
      return { nodeId, status: 'failed', startedAt: record?.startedAt ?? null, completedAt: now, durationMs: null, output: null, error: reason, attempts: record?.attempts ?? 1, wakeAt: null };
    });
    this.wakeAts.clear();
    return records;
  }
}
