import type { Logger } from '@agent-platform/kit';
import { newEvent } from '@agent-platform/kit/events';
import type { ExpressionScope } from '../expressions/expressions.js';
import type { ExecutionFailure } from '../executions/executions.entity.js';
import type { ExecutionStore, Finish, NodeRecord, RunnableExecution } from '../executions/execution-store.js';
import type { WorkflowNode } from '../workflows/graph.js';
import { GraphRun } from './graph-run.js';
import { NodeFailure, type NodeRunners } from './node-runners.js';
import { executionFinished, traceExecution, traceNode } from './telemetry.js';

/** Why an execution stops before its graph is done. */
export type StopReason = 'cancelled' | 'lost' | 'shutdown' | 'timeout';

/** The abort reason the runner understands; anything else counts as `lost`. */
export class ExecutionStop extends Error {
  override readonly name = 'ExecutionStop';
  readonly reason: StopReason;

  constructor(reason: StopReason) {
    super(`execution stopped: ${reason}`);
    this.reason = reason;
  }
}

export interface ExecutionRunnerOptions {
  store: ExecutionStore;
  nodes: NodeRunners;
  /** A node's time-out unless its config sets `timeout_ms`. */
  nodeTimeoutMs: number;
  logger: Logger;
}

interface Settled {
  node: WorkflowNode;
  record: NodeRecord;
  choice?: string | null;
}

export type RunOutcome = 'finished' | 'stopped';

/**
 * Runs one execution to its end, on the lease its caller holds. Node results are written as the
 * run goes: a node with side effects gets a `running` record before it starts and its result
 * right after, so a runner that takes the execution over continues from the last finished node
 * and never repeats a side effect (it fails the execution instead when one was left in doubt).
 * Pure nodes (triggers, conditions, skips) ride along with the next write.
 */
export class ExecutionRunner {
  private readonly options: ExecutionRunnerOptions;

  constructor(options: ExecutionRunnerOptions) {
    this.options = options;
  }

  /** Resolves once the execution is recorded finished ('finished') or this runner let go ('stopped'). */
  async run(execution: RunnableExecution, stop: AbortSignal): Promise<RunOutcome> {
    const remainingMs = execution.deadlineAt.getTime() - Date.now();
    const timeout = new AbortController();
    const deadline = setTimeout(() => timeout.abort(new ExecutionStop('timeout')), Math.max(0, remainingMs));
    const signal = AbortSignal.any([stop, timeout.signal]);
    try {
      return await traceExecution(execution, () => new Run(this.options, execution, signal).go());
    } finally {
      clearTimeout(deadline);
    }
  }
}

class Run {
  private readonly graph: GraphRun;
  private readonly scope: ExpressionScope;
  private readonly recorded: Map<string, NodeRecord>;
  /** Pure results waiting for the next write. */
  private pending: NodeRecord[] = [];
  private readonly inFlight = new Map<string, Promise<Settled>>();
  private readonly nodesStop = new AbortController();
  /** Settles (undefined) when the execution is stopped: one listener for the whole run. */
  private readonly stoppedSignal: Promise<undefined>;

  constructor(
    private readonly options: ExecutionRunnerOptions,
    private readonly execution: RunnableExecution,
    private readonly signal: AbortSignal,
  ) {
    this.graph = new GraphRun(execution.graph);
    this.scope = { input: execution.input, nodes: {}, request: execution.request ?? { query: {}, headers: {} } };
    this.recorded = new Map(execution.recorded.map((record) => [record.nodeId, record]));
    this.stoppedSignal = new Promise<undefined>((resolve) => {
      if (signal.aborted) resolve(undefined);
      else signal.addEventListener('abort', () => resolve(undefined), { once: true });
    });
  }

  async go(): Promise<RunOutcome> {
    const onStop = () => this.nodesStop.abort(this.signal.reason);
    this.signal.addEventListener('abort', onStop, { once: true });
    try {
      if (this.signal.aborted) return await this.stopped();
      let failure: ExecutionFailure | null = this.startReady();
      while (failure === null && this.inFlight.size > 0) {
        const settled = await this.next();
        if (settled === undefined) return await this.stopped();
        this.inFlight.delete(settled.node.id);
        if (settled.record.status === 'failed') {
          this.graph.fail(settled.node.id);
          this.pending.push(settled.record);
          failure = { node_id: settled.node.id, message: settled.record.error ?? 'failed' };
          break;
        }
        this.graph.complete(settled.node.id, settled.choice);
        this.scope.nodes[settled.node.id] = { output: settled.record.output };
        this.pending.push(settled.record);
        // A side effect's result is kept before any later node starts (unless the final write is
        // next anyway): started first, a successor could run while the result was still unwritten,
        // and a runner taking over after a crash would fail the execution on a node that had finished.
        if (this.options.nodes.hasSideEffects(settled.node) && !this.graph.finished && !(await this.flush())) return await this.stopped();
        failure = this.startReady();
      }
      if (failure !== null) await this.abortInFlight(failure.node_id);
      return await this.finish(failure);
    } finally {
      this.signal.removeEventListener('abort', onStop);
      this.nodesStop.abort();
    }
  }

  /** Starts every node that may start, replaying results recorded by an earlier runner. */
  private startReady(): ExecutionFailure | null {
    for (;;) {
      this.collectSkipped();
      const ready = this.graph.takeReady();
      if (ready.length === 0) return null;
      for (const node of ready) {
        const prior = this.recorded.get(node.id);
        if (prior?.status === 'completed') {
          this.scope.nodes[node.id] = { output: prior.output };
          this.graph.complete(node.id, choiceOf(node, prior.output));
        } else if (prior?.status === 'running' || prior?.status === 'failed') {
          this.graph.fail(node.id);
          return {
            node_id: node.id,
            message: 'the runner executing this node stopped before it recorded a result; it is not repeated because its side effects may already have happened',
          };
        } else {
          this.inFlight.set(node.id, this.execute(node));
        }
      }
    }
  }

  private collectSkipped(): void {
    for (const nodeId of this.graph.drainSkipped()) {
      if (this.recorded.get(nodeId)?.status !== 'skipped') this.pending.push({ nodeId, status: 'skipped', startedAt: null, completedAt: null, durationMs: null, output: null, error: null });
    }
  }

  /** The next node to settle, or undefined when the execution was stopped first. */
  private async next(): Promise<Settled | undefined> {
    return Promise.race([this.stoppedSignal, ...this.inFlight.values()]);
  }

  private execute(node: WorkflowNode): Promise<Settled> {
    return traceNode(node, () => this.runNode(node));
  }

  private async runNode(node: WorkflowNode): Promise<Settled> {
    const startedAt = new Date();
    const sideEffects = this.options.nodes.hasSideEffects(node);
    if (sideEffects) {
      this.pending.push({ nodeId: node.id, status: 'running', startedAt, completedAt: null, durationMs: null, output: null, error: null });
      // Recorded before it starts: a runner that takes over must know it may have happened.
      if (!(await this.flush())) return settle(node, startedAt, { failed: 'the execution was stopped before this node started' });
    }
    const timeoutMs = 'timeout_ms' in node.config && typeof node.config.timeout_ms === 'number' ? node.config.timeout_ms : this.options.nodeTimeoutMs;
    const nodeTimeout = AbortSignal.timeout(timeoutMs);
    const signal = AbortSignal.any([this.nodesStop.signal, nodeTimeout]);
    try {
      const result = await this.options.nodes.run(node, {
        tenantId: this.execution.tenantId,
        userId: this.execution.createdBy,
        scope: this.scope,
        signal,
        timeoutMs,
      });
      if (nodeTimeout.aborted) return settle(node, startedAt, { failed: `timed out after ${timeoutMs} ms` });
      return settle(node, startedAt, { output: result.output, choice: result.choice });
    } catch (error) {
      if (nodeTimeout.aborted && !this.nodesStop.signal.aborted) return settle(node, startedAt, { failed: `timed out after ${timeoutMs} ms` });
      if (error instanceof NodeFailure) return settle(node, startedAt, { failed: error.message });
      if (this.nodesStop.signal.aborted) return settle(node, startedAt, { failed: 'stopped with the execution' });
      this.options.logger.error({ err: error, execution_id: this.execution.id, node_id: node.id }, 'node failed unexpectedly');
      return settle(node, startedAt, { failed: 'internal error while running the node' });
    }
  }

  /** Writes the pending records; false when this runner no longer holds the execution. */
  private async flush(): Promise<boolean> {
    if (this.pending.length === 0) return true;
    const records = this.pending;
    this.pending = [];
    return this.options.store.saveNodes(this.execution.id, records);
  }

  /** After a failure: the other nodes in flight are stopped and recorded as such. */
  private async abortInFlight(failedNodeId: string): Promise<void> {
    this.nodesStop.abort(new NodeFailure(`node ${failedNodeId} failed`));
    for (const settled of await Promise.all(this.inFlight.values())) {
      this.pending.push({ ...settled.record, status: 'failed', output: null, error: settled.record.error ?? `stopped: node ${failedNodeId} failed` });
    }
    this.inFlight.clear();
  }

  private async finish(failure: ExecutionFailure | null): Promise<RunOutcome> {
    this.collectSkipped();
    const completedAt = new Date();
    const durationMs = Math.max(0, completedAt.getTime() - this.execution.startedAt.getTime());
    const finish: Finish = failure
      ? { status: 'failed', output: null, error: failure, completedAt, durationMs }
      : { status: 'completed', output: this.output(), error: null, completedAt, durationMs };
    const data = {
      execution_id: this.execution.id,
      workflow_id: this.execution.workflowId,
      status: finish.status,
      duration_ms: durationMs,
      ...(failure ? { error: failure } : {}),
    };
    const event = newEvent(failure ? 'workflow.execution.failed' : 'workflow.execution.completed', this.execution.tenantId, data, completedAt);
    const recorded = await this.options.store.finish(this.execution.id, finish, this.pending, event);
    this.pending = [];
    if (recorded) executionFinished(this.execution, finish.status, durationMs);
    return recorded ? 'finished' : 'stopped';
  }

  /**
   * Why it stopped decides what is written: a time-out fails the execution here; a cancel or a
   * lost lease was written by whoever caused it; on shutdown the execution is handed back whole.
   */
  private async stopped(): Promise<RunOutcome> {
    const reason = this.signal.reason instanceof ExecutionStop ? this.signal.reason.reason : 'lost';
    this.nodesStop.abort(this.signal.reason);
    const settled = await Promise.all(this.inFlight.values());
    this.inFlight.clear();
    if (reason === 'timeout') {
      const running = settled.map((entry) => entry.node.id);
      for (const entry of settled) this.pending.push({ ...entry.record, status: 'failed', output: null, error: 'stopped: the execution timed out' });
      const limitMs = this.execution.deadlineAt.getTime() - this.execution.startedAt.getTime();
      return this.finish({ node_id: running[0] ?? '', message: `the execution timed out after ${limitMs} ms` });
    }
    if (reason === 'shutdown') {
      // Nodes cut short keep their `running` record: whoever resumes must not repeat them.
      await this.options.store.release(this.execution.id);
    }
    return 'stopped';
  }

  /** The result of the run: the output of its one last node, or of each last node by id. */
  private output(): unknown {
    const leaves = this.graph.leaves();
    if (leaves.length === 0) return null;
    if (leaves.length === 1) return this.scope.nodes[leaves[0]!]?.output ?? null;
    return Object.fromEntries(leaves.map((id) => [id, this.scope.nodes[id]?.output ?? null]));
  }
}

function settle(node: WorkflowNode, startedAt: Date, result: { output?: unknown; choice?: string | null; failed?: string }): Settled {
  const completedAt = new Date();
  const record: NodeRecord = {
    nodeId: node.id,
    status: result.failed === undefined ? 'completed' : 'failed',
    startedAt,
    completedAt,
    durationMs: completedAt.getTime() - startedAt.getTime(),
    output: result.failed === undefined ? (result.output ?? null) : null,
    error: result.failed ?? null,
  };
  return result.choice === undefined ? { node, record } : { node, record, choice: result.choice };
}

/** A recorded condition output names the target it chose. */
function choiceOf(node: WorkflowNode, output: unknown): string | null | undefined {
  if (node.type !== 'condition') return undefined;
  const target = typeof output === 'object' && output !== null ? (output as { target?: unknown }).target : null;
  return typeof target === 'string' ? target : null;
}
