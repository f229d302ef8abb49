import { backoffDelay, timedSignal, type Clock, type Logger } from '@agent-platform/kit';
import type { EventEnvelope } from '@agent-platform/kit/events';
import type { ExpressionScope } from '../expressions/expressions.js';
import type { RunnableExecution } from '../executions/execution-store.js';
import type { NodeRecord } from '../executions/node-records.js';
import { MAX_BACKOFF_SECONDS, type WorkflowNode } from '../workflows/graph.js';
import { NodeFailure, type NodeRunners } from './node-runners.js';

/** A node done with for now (completed, failed, or waiting): its record, and what the run takes from it. */
export interface Settled {
  node: WorkflowNode;
  record: NodeRecord;
  choice?: string | null;
  /** A node that began waiting: the event that announces it, when people are to be told. */
  announce?: EventEnvelope<object>;
}

/** How a node's run ended: its output (and a condition's choice), or why it failed. */
export interface NodeOutcome {
  output?: unknown;
  choice?: string | null;
  failed?: string;
}

export interface NodeAttemptsOptions {
  nodes: NodeRunners;
  /** A node's time-out unless its config sets `timeout_ms`. */
  nodeTimeoutMs: number;
  clock: Clock;
  logger: Logger;
  execution: RunnableExecution;
  scope: ExpressionScope;
  /** Ends the attempt in flight and any back-off: the run is over, or another node failed it. */
  stop: AbortSignal;
  /** Writes a side-effect node's `running` record before an attempt; false when the execution is no longer held. */
  recordStart(record: NodeRecord): Promise<boolean>;
}

/**
 * Runs the nodes of one execution that do work (all but the waiting ones): each attempt under its
 * time-out, again after a failure while the node's `retry` allows, the doubling back-off between
 * measured on the runner's clock.
 */
export class NodeAttempts {
  private readonly options: NodeAttemptsOptions;

  constructor(options: NodeAttemptsOptions) {
    this.options = options;
  }

  async run(node: WorkflowNode): Promise<Settled> {
    const { clock, stop } = this.options;
    const startedAt = new Date(clock.now());
    const sideEffects = this.options.nodes.hasSideEffects(node);
    const maxAttempts = node.retry?.max_attempts ?? 1;
    for (let attempt = 1; ; attempt += 1) {
      if (sideEffects) {
        const running: NodeRecord = { nodeId: node.id, status: 'running', startedAt, completedAt: null, durationMs: null, output: null, error: null, attempts: attempt, wakeAt: null };
        // Recorded before it starts: a runner that takes over must know it may have happened.
        if (!(await this.options.recordStart(running))) return this.settle(node, startedAt, { failed: 'the execution was stopped before this node started' }, attempt);
      }
      const outcome = await this.attempt(node);
      if (outcome.failed === undefined || attempt >= maxAttempts || stop.aborted) return this.settle(node, startedAt, outcome, attempt);
      await clock.sleep(backoffDelay(attempt, { initialMs: (node.retry?.backoff_seconds ?? 1) * 1_000, maxMs: MAX_BACKOFF_SECONDS * 1_000 }), stop);
      if (stop.aborted) return this.settle(node, startedAt, outcome, attempt);
    }
  }

  private async attempt(node: WorkflowNode): Promise<NodeOutcome> {
    const { execution, stop } = this.options;
    const timeoutMs = 'timeout_ms' in node.config && typeof node.config.timeout_ms === 'number' ? node.config.timeout_ms : this.options.nodeTimeoutMs;
    // In real time, not on the runner's clock: it bounds the node's I/O, which the integrations bound in real time too.
    const bound = timedSignal(timeoutMs, stop, { timeout: () => new DOMException(`timed out after ${timeoutMs} ms`, 'TimeoutError') });
    try {
      const result = await this.options.nodes.run(node, {
        tenantId: execution.tenantId,
        // Graphs saved before authors were kept run as their creator, as they always did.
        author: execution.graphAuthor ?? { kind: 'user', userId: execution.createdBy, apiKeyId: null, scopes: [] },
        scope: this.options.scope,
        signal: bound.signal,
        timeoutMs,
      });
      if (bound.expired) return { failed: `timed out after ${timeoutMs} ms` };
      return result.choice === undefined ? { output: result.output } : { output: result.output, choice: result.choice };
    } catch (error) {
      if (bound.expired) return { failed: `timed out after ${timeoutMs} ms` };
      if (error instanceof NodeFailure) return { failed: error.message };
      if (stop.aborted) return { failed: 'stopped with the execution' };
      this.options.logger.error({ err: error, execution_id: execution.id, node_id: node.id }, 'node failed unexpectedly');
      return { failed: 'internal error while running the node' };
    } finally {
      bound.dispose();
    }
  }

  private settle(node: WorkflowNode, startedAt: Date, outcome: NodeOutcome, attempts: number): Settled {
    return settled(node, { startedAt, completedAt: new Date(this.options.clock.now()) }, outcome, attempts);
  }
}

/** The record of a node that ran between `startedAt` and `completedAt` and ended with `outcome`. */
export function settled(node: WorkflowNode, times: { startedAt: Date; completedAt: Date }, outcome: NodeOutcome, attempts: number): Settled {
  const { startedAt, completedAt } = times;
  const record: NodeRecord = {
    nodeId: node.id,
    status: outcome.failed === undefined ? 'completed' : 'failed',
    startedAt,
    completedAt,
    durationMs: completedAt.getTime() - startedAt.getTime(),
    output: outcome.failed === undefined ? (outcome.output ?? null) : null,
    error: outcome.failed ?? null,
    attempts,
    wakeAt: null,
  };
  return outcome.choice === undefined ? { node, record } : { node, record, choice: outcome.choice };
}
