import { timedSignal, type Clock, type Logger } from '@agent-platform/kit';
import { newEvent, type EventEnvelope } from '@agent-platform/kit/events';
import type { ExpressionScope } from '../expressions/expressions.js';
import type { ExecutionLeases } from '../executions/execution-leases.js';
import type { ExecutionStore, Finish, RunnableExecution } from '../executions/execution-store.js';
import type { ExecutionFailure } from '../executions/executions.entity.js';
import type { NodeRecord } from '../executions/node-records.js';
import type { WaitingExecutions } from '../executions/waiting-executions.js';
import { kindOf } from '../nodes/node-kinds.js';
import type { WorkflowNode } from '../workflows/graph.js';
import { GraphRun } from './graph-run.js';
import { NodeAttempts, type Settled } from './node-attempts.js';
import { NodeFailure, type NodeRunners } from './node-runners.js';
import { NodeWaits } from './node-waits.js';
import { executionFinished, traceExecution, traceNode } from './telemetry.js';
import { isWaitingNode } from './waiting-nodes.js';

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
  waiting: WaitingExecutions;
  leases: ExecutionLeases;
  nodes: NodeRunners;
  /** A node's time-out unless its config sets `timeout_ms`. */
  nodeTimeoutMs: number;
  /** What the run's times are read from and its waits measured on: when waiting nodes are due, retries' back-off, the execution's time-out. */
  clock: Clock;
  logger: Logger;
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
 * Pure nodes (triggers, conditions, skips) ride along with the next write. This is the stepping
 * through the graph; a node's attempts and retries are NodeAttempts', waiting nodes NodeWaits'.
 */
export class ExecutionRunner {
  private readonly options: ExecutionRunnerOptions;

  constructor(options: ExecutionRunnerOptions) {
    this.options = options;
  }

  /** Resolves once the execution is recorded finished, parked waiting, or this runner let go ('stopped'). */
  async run(execution: RunnableExecution, stop: AbortSignal): Promise<RunOutcome> {
    const { clock } = this.options;
    const bound = timedSignal(execution.deadlineAt.getTime() - clock.now(), stop, { timeout: () => new ExecutionStop('timeout') }, clock);
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
  private readonly waits: NodeWaits;
  private readonly attempts: NodeAttempts;
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
    this.waits = new NodeWaits(execution, this.recorded, options.waiting);
    this.attempts = new NodeAttempts({
      nodes: options.nodes,
      nodeTimeoutMs: options.nodeTimeoutMs,
      clock: options.clock,
      logger: options.logger,
      execution,
      scope: this.scope,
      stop: this.nodesStop.signal,
      recordStart: (record) => {
        this.pending.push(record);
        return this.flush();
      },
    });
    this.stoppedSignal = new Promise<undefined>((resolve) => {
      if (signal.aborted) resolve(undefined);
      else signal.addEventListener('abort', () => resolve(undefined), { once: true });
    });
  }

  async go(): Promise<RunOutcome> {
    const onStop = () => this.nodesStop.abort(this.signal.reason);
    this.signal.addEventListener('abort', onStop, { once: true });
    try {
      if (this.signal.aborted || !(await this.waits.settleDue(this.now()))) return await this.stopped();
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
      return this.waits.any ? await this.park() : await this.finish(null);
    } finally {
      this.signal.removeEventListener('abort', onStop);
      this.nodesStop.abort(RUN_OVER);
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
        } else if (prior?.status === 'waiting' && prior.wakeAt !== null) {
          this.waits.add(node.id, prior.wakeAt);
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
      this.waits.add(node.id, record.wakeAt!);
      return null;
    }
    this.graph.complete(node.id, settled.choice);
    this.scope.nodes[node.id] = { output: record.output };
    return null;
  }

  /** decisions §13: a failed node under `on_error: continue` leads on; a branching one (a condition) then chooses no branch. */
  private continuePast(node: WorkflowNode, record: NodeRecord): void {
    this.scope.nodes[node.id] = { output: record.output };
    this.graph.complete(node.id, kindOf(node).targets ? null : undefined);
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
    return traceNode(node, () => (isWaitingNode(node) ? Promise.resolve(this.waits.begin(node, this.scope, this.now())) : this.attempts.run(node)));
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
    this.pending.push(...this.waits.end(`stopped: node ${failedNodeId} failed`, this.now()));
  }

  /** Gives the lease up until a decision or the earliest waiting node's time (decisions §13.4). */
  private async park(): Promise<RunOutcome> {
    this.collectSkipped();
    if (this.events.length > 0 && !(await this.flush())) return 'stopped';
    const parked = await this.options.waiting.park(this.execution.id, this.pending, this.waits.earliest());
    this.pending = [];
    return parked ? 'parked' : 'stopped';
  }

  private async finish(failure: ExecutionFailure | null): Promise<RunOutcome> {
    this.collectSkipped();
    const completedAt = this.now();
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
      this.pending.push(...this.waits.end('stopped: the execution timed out', this.now()));
      this.events = [];
      const limitMs = this.execution.deadlineAt.getTime() - this.execution.startedAt.getTime();
      return this.finish({ node_id: running[0] ?? '', message: `the execution timed out after ${limitMs} ms` });
    }
    if (reason === 'shutdown') {
      // Nodes cut short keep their `running` record: whoever resumes must not repeat them.
      await this.options.leases.release(this.execution.id);
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

  private now(): Date {
    return new Date(this.options.clock.now());
  }
}

/** A recorded condition output names the target it chose. */
function choiceOf(node: WorkflowNode, output: unknown): string | null | undefined {
  if (node.type !== 'condition') return undefined;
  const target = typeof output === 'object' && output !== null ? (output as { target?: unknown }).target : null;
  return typeof target === 'string' ? target : null;
}
