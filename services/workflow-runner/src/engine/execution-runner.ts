import { backoffDelay, timedSignal, type Logger } from '@agent-platform/kit';
import { setTimeout as sleep } from 'node:timers/promises';
import { newEvent, type EventEnvelope } from '@agent-platform/kit/events';
import type { ExpressionScope } from '../expressions/expressions.js';
import type { ExecutionFailure } from '../executions/executions.entity.js';
import type { ExecutionStore, Finish, NodeRecord, RunnableExecution } from '../executions/execution-store.js';
import { MAX_BACKOFF_SECONDS, type WorkflowNode } from '../workflows/graph.js';
import { GraphRun } from './graph-run.js';
import { NodeFailure, type NodeRunners } from './node-runners.js';
import { executionFinished, traceExecution, traceNode } from './telemetry.js';
import { dueOutput, isWaitingNode, startWaiting, type WaitingNode } from './waiting-nodes.js';

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

/**
 * What ends any node still running when its run is over. Made once: `abort()` without a reason
 * makes a DOMException, stack and all, at the end of every execution.
 */
const RUN_OVER = new Error('the execution run is over');

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
  /** A node that began waiting: the event that announces it, when people are to be told. */
  announce?: EventEnvelope<object>;
}

/** `parked`: the execution waits (decisions §13), with no lease, until a decision or a time wakes it. */
export type RunOutcome = 'finished' | 'parked' | 'stopped';

const IN_DOUBT = 'the runner executing this node stopped before it recorded a result; it is not repeated because its side effects may already have happened';

/**
 * Runs one execution to its end, or until only waiting nodes are left, on the lease its caller
 * holds. Node results are written as the run goes: a node with side effects gets a `running`
 * record before each attempt and its result right after, so a runner that takes the execution
 * over continues from the last finished node and never repeats a side effect (it fails the
 * execution instead when one was left in doubt, or goes on past it under `on_error: continue`).
 * Pure nodes (triggers, conditions, skips) ride along with the next write.
 */
export class ExecutionRunner {
  private readonly options: ExecutionRunnerOptions;

  constructor(options: ExecutionRunnerOptions) {
    this.options = options;
  }

  /** Resolves once the execution is recorded finished, parked waiting, or this runner let go ('stopped'). */
  async run(execution: RunnableExecution, stop: AbortSignal): Promise<RunOutcome> {
    const bound = timedSignal(execution.deadlineAt.getTime() - Date.now(), stop, { timeout: () => new ExecutionStop('timeout') });
    try {
      return await traceExecution(execution, () => new Run(this.options, execution, bound.signal).go());
    } finally {
      bound.dispose();
    }
  }
}

class Run {
  private readonly graph: GraphRun;
  private readonly scope: ExpressionScope;
  private readonly recorded: Map<string, NodeRecord>;
  /** Pure results waiting for the next write. */
  private pending: NodeRecord[] = [];
  private events: EventEnvelope<object>[] = [];
  private readonly inFlight = new Map<string, Promise<Settled>>();
  /** Nodes waiting for a decision or a time, with when they wake. */
  private readonly waiting = new Map<string, Date>();
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
      if (this.signal.aborted || !(await this.settleDue())) return await this.stopped();
      let failure: ExecutionFailure | null = this.startReady();
      while (failure === null && this.inFlight.size > 0) {
        const settled = await this.next();
        if (settled === undefined) return await this.stopped();
        this.inFlight.delete(settled.node.id);
        failure = this.apply(settled);
        if (failure !== null) break;
        // A side effect's result is kept before any later node starts (unless the final write is
        // next anyway): started first, a successor could run while the result was still unwritten,
        // and a runner taking over after a crash would fail the execution on a node that had finished.
        // A node that began waiting is kept at once too, so its announcement goes out now.
        const mustWrite = (this.options.nodes.hasSideEffects(settled.node) && !this.graph.finished) || settled.record.status === 'waiting';
        if (mustWrite && !(await this.flush())) return await this.stopped();
        failure = this.startReady();
      }
      if (failure !== null) {
        await this.abortInFlight(failure.node_id);
        return await this.finish(failure);
      }
      return this.waiting.size > 0 ? await this.park() : await this.finish(null);
    } finally {
      this.signal.removeEventListener('abort', onStop);
      this.nodesStop.abort(RUN_OVER);
    }
  }

  /**
   * Waiting nodes whose time has come (an approval timed out, a wait ended) complete now, unless a
   * decision reached them first; false when this runner no longer holds the execution.
   */
  private async settleDue(): Promise<boolean> {
    const now = Date.now();
    for (const record of this.recorded.values()) {
      if (record.status !== 'waiting' || record.wakeAt === null || record.wakeAt.getTime() > now) continue;
      const node = this.execution.graph.nodes.find((candidate) => candidate.id === record.nodeId);
      if (node === undefined || !isWaitingNode(node)) continue;
      const completedAt = new Date();
      const standing = await this.options.store.settleWaiting(this.execution.id, {
        ...record,
        status: 'completed',
        completedAt,
        durationMs: record.startedAt === null ? null : completedAt.getTime() - record.startedAt.getTime(),
        output: dueOutput(node, record.wakeAt),
        wakeAt: null,
      });
      if (standing === undefined) return false;
      this.recorded.set(record.nodeId, standing);
    }
    return true;
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
        } else if (prior?.status === 'waiting' && prior.wakeAt !== null) {
          this.waiting.set(node.id, prior.wakeAt);
        } else if (prior?.status === 'failed' && node.on_error === 'continue' && prior.output !== null) {
          this.continuePast(node, prior);
        } else if (prior?.status === 'running' || prior?.status === 'failed') {
          const record: NodeRecord = { ...prior, status: 'failed', output: null, error: IN_DOUBT };
          const failure = this.apply({ node, record });
          if (failure !== null) return failure;
        } else {
          this.inFlight.set(node.id, this.execute(node));
        }
      }
    }
  }

  /** Takes a settled node into the run; the execution's failure when it failed without `on_error: continue`. */
  private apply(settled: Settled): ExecutionFailure | null {
    const { node, record } = settled;
    if (record.status === 'failed') {
      if (node.on_error === 'continue') {
        const continued: NodeRecord = { ...record, output: { error: record.error } };
        this.pending.push(continued);
        this.continuePast(node, continued);
        return null;
      }
      this.graph.fail(node.id);
      this.pending.push(record);
      return { node_id: node.id, message: record.error ?? 'failed' };
    }
    this.pending.push(record);
    if (settled.announce) this.events.push(settled.announce);
    if (record.status === 'waiting') {
      this.waiting.set(node.id, record.wakeAt!);
      return null;
    }
    this.graph.complete(node.id, settled.choice);
    this.scope.nodes[node.id] = { output: record.output };
    return null;
  }

  /** decisions §13: a failed node under `on_error: continue` leads on; a condition then chooses no branch. */
  private continuePast(node: WorkflowNode, record: NodeRecord): void {
    this.scope.nodes[node.id] = { output: record.output };
    this.graph.complete(node.id, node.type === 'condition' ? null : undefined);
  }

  private collectSkipped(): void {
    for (const nodeId of this.graph.drainSkipped()) {
      if (this.recorded.get(nodeId)?.status !== 'skipped') {
        this.pending.push({ nodeId, status: 'skipped', startedAt: null, completedAt: null, durationMs: null, output: null, error: null, attempts: 0, wakeAt: null });
      }
    }
  }

  /** The next node to settle, or undefined when the execution was stopped first. */
  private async next(): Promise<Settled | undefined> {
    return Promise.race([this.stoppedSignal, ...this.inFlight.values()]);
  }

  private execute(node: WorkflowNode): Promise<Settled> {
    return traceNode(node, () => (isWaitingNode(node) ? Promise.resolve(this.beginWaiting(node)) : this.runNode(node)));
  }

  /** An approval or wait node reached: it waits (announced, for an approval) or, already due, completes. */
  private beginWaiting(node: WaitingNode): Settled {
    const startedAt = new Date();
    let start;
    try {
      start = startWaiting(node, this.scope, startedAt);
    } catch (error) {
      return settle(node, startedAt, { failed: error instanceof Error ? error.message : String(error) }, 1);
    }
    if (start === undefined) return settle(node, startedAt, { output: dueOutput(node, startedAt) }, 1);
    const record: NodeRecord = { nodeId: node.id, status: 'waiting', startedAt, completedAt: null, durationMs: null, output: start.output, error: null, attempts: 1, wakeAt: start.wakeAt };
    if (start.announce === undefined) return { node, record };
    const data = { execution_id: this.execution.id, workflow_id: this.execution.workflowId, ...start.announce };
    return { node, record, announce: newEvent('workflow.execution.waiting', this.execution.tenantId, data, startedAt) };
  }

  /** Runs a node, again after each failure while its `retry` allows, waiting the doubling backoff between. */
  private async runNode(node: WorkflowNode): Promise<Settled> {
    const startedAt = new Date();
    const sideEffects = this.options.nodes.hasSideEffects(node);
    const maxAttempts = node.retry?.max_attempts ?? 1;
    for (let attempt = 1; ; attempt += 1) {
      if (sideEffects) {
        this.pending.push({ nodeId: node.id, status: 'running', startedAt, completedAt: null, durationMs: null, output: null, error: null, attempts: attempt, wakeAt: null });
        // Recorded before it starts: a runner that takes over must know it may have happened.
        if (!(await this.flush())) return settle(node, startedAt, { failed: 'the execution was stopped before this node started' }, attempt);
      }
      const result = await this.attempt(node);
      if (result.failed === undefined || attempt >= maxAttempts || this.nodesStop.signal.aborted) return settle(node, startedAt, result, attempt);
      const backoffMs = backoffDelay(attempt, { initialMs: (node.retry?.backoff_seconds ?? 1) * 1_000, maxMs: MAX_BACKOFF_SECONDS * 1_000 });
      if (!(await pause(backoffMs, this.nodesStop.signal))) return settle(node, startedAt, result, attempt);
    }
  }

  private async attempt(node: WorkflowNode): Promise<{ output?: unknown; choice?: string | null; failed?: string }> {
    const timeoutMs = 'timeout_ms' in node.config && typeof node.config.timeout_ms === 'number' ? node.config.timeout_ms : this.options.nodeTimeoutMs;
    const bound = timedSignal(timeoutMs, this.nodesStop.signal, { timeout: () => new DOMException(`timed out after ${timeoutMs} ms`, 'TimeoutError') });
    try {
      const result = await this.options.nodes.run(node, {
        tenantId: this.execution.tenantId,
        // Graphs saved before authors were kept run as their creator, as they always did.
        author: this.execution.graphAuthor ?? { kind: 'user', userId: this.execution.createdBy, apiKeyId: null, scopes: [] },
        scope: this.scope,
        signal: bound.signal,
        timeoutMs,
      });
      if (bound.expired) return { failed: `timed out after ${timeoutMs} ms` };
      return result.choice === undefined ? { output: result.output } : { output: result.output, choice: result.choice };
    } catch (error) {
      if (bound.expired) return { failed: `timed out after ${timeoutMs} ms` };
      if (error instanceof NodeFailure) return { failed: error.message };
      if (this.nodesStop.signal.aborted) return { failed: 'stopped with the execution' };
      this.options.logger.error({ err: error, execution_id: this.execution.id, node_id: node.id }, 'node failed unexpectedly');
      return { failed: 'internal error while running the node' };
    } finally {
      bound.dispose();
    }
  }

  /** Writes the pending records and events; false when this runner no longer holds the execution. */
  private async flush(): Promise<boolean> {
    if (this.pending.length === 0 && this.events.length === 0) return true;
    const [records, events] = [this.pending, this.events];
    this.pending = [];
    this.events = [];
    return this.options.store.saveNodes(this.execution.id, records, events);
  }

  /** After a failure: the other nodes in flight are stopped and recorded as such, and nothing waits any more. */
  private async abortInFlight(failedNodeId: string): Promise<void> {
    this.nodesStop.abort(new NodeFailure(`node ${failedNodeId} failed`));
    for (const settled of await Promise.all(this.inFlight.values())) {
      this.pending.push({ ...settled.record, status: 'failed', output: null, error: settled.record.error ?? `stopped: node ${failedNodeId} failed`, wakeAt: null });
    }
    this.inFlight.clear();
    this.endWaiting(`stopped: node ${failedNodeId} failed`);
  }

  /** Waiting nodes of an execution that ends are failed, so none is left to decide. */
  private endWaiting(reason: string): void {
    const completedAt = new Date();
    for (const nodeId of this.waiting.keys()) {
      const record = this.recorded.get(nodeId);
      this.pending.push({ nodeId, status: 'failed', startedAt: record?.startedAt ?? null, completedAt, durationMs: null, output: null, error: reason, attempts: record?.attempts ?? 1, wakeAt: null });
    }
    this.waiting.clear();
  }

  /** Gives the lease up until a decision or the earliest waiting node's time (decisions §13.4). */
  private async park(): Promise<RunOutcome> {
    this.collectSkipped();
    if (this.events.length > 0 && !(await this.flush())) return 'stopped';
    const wakeAt = new Date(Math.min(...[...this.waiting.values()].map((time) => time.getTime())));
    const parked = await this.options.store.park(this.execution.id, this.pending, wakeAt);
    this.pending = [];
    return parked ? 'parked' : 'stopped';
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
    if (this.events.length > 0 && !(await this.flush())) return 'stopped';
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
      for (const entry of settled) this.pending.push({ ...entry.record, status: 'failed', output: null, error: 'stopped: the execution timed out', wakeAt: null });
      this.endWaiting('stopped: the execution timed out');
      this.events = [];
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

function settle(node: WorkflowNode, startedAt: Date, result: { output?: unknown; choice?: string | null; failed?: string }, attempts: number): Settled {
  const completedAt = new Date();
  const record: NodeRecord = {
    nodeId: node.id,
    status: result.failed === undefined ? 'completed' : 'failed',
    startedAt,
    completedAt,
    durationMs: completedAt.getTime() - startedAt.getTime(),
    output: result.failed === undefined ? (result.output ?? null) : null,
    error: result.failed ?? null,
    attempts,
    wakeAt: null,
  };
  return result.choice === undefined ? { node, record } : { node, record, choice: result.choice };
}

/** Waits `ms`; false when `signal` aborted first. */
async function pause(ms: number, signal: AbortSignal): Promise<boolean> {
  try {
    await sleep(ms, undefined, { signal });
    return true;
  } catch {
    return false;
  }
}

/** A recorded condition output names the target it chose. */
function choiceOf(node: WorkflowNode, output: unknown): string | null | undefined {
  if (node.type !== 'condition') return undefined;
  const target = typeof output === 'object' && output !== null ? (output as { target?: unknown }).target : null;
  return typeof target === 'string' ? target : null;
}
