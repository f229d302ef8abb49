import { ACCESS, characters, DECISION_COMMENT_MAX, DomainError, FieldErrors, newId, requireAccess, systemClock, type Actor, type Clock, type CursorPage } from '@agent-platform/kit';
import { captureTraceContext, newEvent } from '@agent-platform/kit/events';
import type { Workflow } from '../workflows/workflows.entity.js';
import { foundWorkflow, type WorkflowsRepository } from '../workflows/workflows.repository.js';
import type { ExecutionStore, RunnableExecution } from './execution-store.js';
import type { ExecutionWorker } from './execution-worker.js';
import { EXECUTION_STATUSES, type Execution, type ExecutionStatus, type ExecutionTrigger, type InboundRequest } from './executions.entity.js';
import type { DecisionOutcome, ExecutionsRepository, ExecutionWithNodes } from './executions.repository.js';
import { decisionOutput } from '../engine/waiting-nodes.js';

/** decisions §7: a synchronous execute waits at most this long. */
export const MAX_WAIT_MS = 30_000;
const WAIT_POLL_MS = 50;

export interface ExecutionsServiceOptions {
  workflows: WorkflowsRepository;
  executions: ExecutionsRepository;
  store: ExecutionStore;
  worker: ExecutionWorker;
  executionTimeoutMs: number;
  /** The runner's: an execution's start, deadline, decisions and cancel are read from it, as its run reads it. */
  clock: Clock;
}

/** What else must hold for an execution to be accepted (see ExecutionStore.accept). */
export interface StartConditions {
  /** A schedule tick: accepted only if no runner has started this tick yet. */
  tick?: Date;
  /** Inbound webhooks: accepted only while the workflow is active and unchanged since it was read. */
  whileActive?: boolean;
}

/** Starting executions (by hand, retry, inbound webhook, schedule) and reading them back. */
export class ExecutionsService {
  private readonly options: ExecutionsServiceOptions;

  constructor(options: ExecutionsServiceOptions) {
    this.options = options;
  }

  /**
   * decisions §7: runs in draft and active; a paused workflow answers conflict. `trigger` is what
   * the caller says started it: `manual` (absent), or `tool` for an agent's workflow tool (§12).
   */
  async execute(actor: Actor, workflowId: string, inputJson: string | undefined, waitMs: number | undefined, trigger?: string): Promise<ExecutionWithNodes> {
    requireAccess(actor, ACCESS.workflows.execute);
    const workflow = foundWorkflow(await this.options.workflows.find(actor.tenantId, workflowId));
    const errors = new FieldErrors();
    const input = parseInput(inputJson, errors);
    const recorded = parseTrigger(trigger, errors);
    errors.throwIfAny();
    refusePaused(workflow);
    const execution = await this.startNow(workflow, recorded, input, null);
    if (waitMs !== undefined) await this.waitFor(execution.id, Math.min(Math.max(waitMs, 1), MAX_WAIT_MS));
    return this.read(actor.tenantId, workflowId, execution.id);
  }

  /** Starts a new execution of the workflow's current graph with the input of an earlier one. */
  async retry(actor: Actor, workflowId: string, executionId: string): Promise<ExecutionWithNodes> {
    requireAccess(actor, ACCESS.workflows.execute);
    const workflow = foundWorkflow(await this.options.workflows.find(actor.tenantId, workflowId));
    const previous = await this.options.executions.find(actor.tenantId, workflowId, executionId);
    if (!previous) throw DomainError.notFound('Execution');
    refusePaused(workflow);
    const execution = await this.startNow(workflow, 'retry', previous.execution.input, previous.execution.request);
    return this.read(actor.tenantId, workflowId, execution.id);
  }

  async get(actor: Actor, workflowId: string, executionId: string): Promise<ExecutionWithNodes> {
    requireAccess(actor, ACCESS.workflows.read);
    return this.read(actor.tenantId, workflowId, executionId);
  }

  async list(actor: Actor, workflowId: string, page: CursorPage, status: string | undefined): Promise<{ items: Execution[]; total: number; hasMore: boolean }> {
    requireAccess(actor, ACCESS.workflows.read);
    if (status !== undefined && !(EXECUTION_STATUSES as readonly string[]).includes(status)) {
      throw DomainError.validation([{ field: 'status', message: `must be one of ${EXECUTION_STATUSES.join(', ')}` }]);
    }
    foundWorkflow(await this.options.workflows.find(actor.tenantId, workflowId));
    return this.options.executions.list(actor.tenantId, workflowId, page, status as ExecutionStatus | undefined);
  }

  /**
   * decisions §13: approves or rejects a waiting approval node; its execution wakes and goes on
   * (here at once: this runner claims it). A decided or non-waiting node, or a finished
   * execution, is a conflict.
   */
  async decide(actor: Actor, workflowId: string, executionId: string, nodeId: string, approved: boolean, comment: string | undefined): Promise<ExecutionWithNodes> {
    requireAccess(actor, ACCESS.workflows.execute);
    const now = this.now();
    if (comment !== undefined && comment.length > DECISION_COMMENT_MAX) throw DomainError.validation([{ field: 'comment', message: `must be at most ${characters(DECISION_COMMENT_MAX)} characters` }]);
    const output = decisionOutput(approved, actor.userId, comment ?? null, now);
    refuseDecision(await this.options.executions.decide(actor.tenantId, workflowId, executionId, nodeId, output, now), nodeId);
    this.options.worker.wake();
    return this.read(actor.tenantId, workflowId, executionId);
  }

  /** A running or waiting execution is cancelled at once; one that has finished cannot be (conflict). */
  async cancel(actor: Actor, workflowId: string, executionId: string): Promise<ExecutionWithNodes> {
    requireAccess(actor, ACCESS.workflows.execute);
    if (!(await this.options.executions.cancel(actor.tenantId, workflowId, executionId, this.now()))) {
      const current = await this.read(actor.tenantId, workflowId, executionId);
      throw new DomainError('conflict', `The execution has already finished (${current.execution.status}).`);
    }
    this.options.worker.cancelLocal(executionId);
    return this.read(actor.tenantId, workflowId, executionId);
  }

  /**
   * Records a running execution with its `started` event and runs it here. Every trigger starts
   * executions through this one place; the caller has checked the workflow's status.
   */
  async start(workflow: Workflow, trigger: ExecutionTrigger, input: unknown, request: InboundRequest | null, conditions: StartConditions = {}): Promise<RunnableExecution | undefined> {
    const now = this.now();
    const execution: RunnableExecution = {
      id: newId('execution'),
      tenantId: workflow.tenantId,
      workflowId: workflow.id,
      trigger,
      graph: { nodes: workflow.nodes, edges: workflow.edges },
      workflowVersion: workflow.version,
      input,
      request,
      startedAt: now,
      deadlineAt: new Date(now.getTime() + this.options.executionTimeoutMs),
      createdBy: workflow.createdBy,
      graphAuthor: workflow.graphAuthor,
      trace: captureTraceContext(),
      recorded: [],
    };
    const started = newEvent('workflow.execution.started', workflow.tenantId, { execution_id: execution.id, workflow_id: workflow.id, status: 'running', duration_ms: 0 }, now);
    const accepted = await this.options.store.accept({
      execution,
      started,
      ...(conditions.tick ? { tick: conditions.tick } : {}),
      ...(conditions.whileActive ? { requireActive: true, workflowUpdatedAt: workflow.updatedAt } : {}),
    });
    if (!accepted) return undefined;
    await this.options.worker.submit(execution);
    return execution;
  }

  /** start() without conditions: refused only when the workflow was deleted meanwhile. */
  async startNow(workflow: Workflow, trigger: CallerTrigger | 'retry', input: unknown, request: InboundRequest | null): Promise<RunnableExecution> {
    const execution = await this.start(workflow, trigger, input, request);
    // Only a workflow deleted meanwhile is refused without conditions.
    if (!execution) throw DomainError.notFound('Workflow');
    return execution;
  }

  /**
   * Until the execution has finished or `ms` have passed: at once when it runs here, else by polling
   * its status. In real time, not on the runner's clock: it bounds the caller's call, whose deadline
   * runs in real time (on a test's clock, nothing would end the polling).
   */
  private async waitFor(executionId: string, ms: number): Promise<void> {
    const until = systemClock.now() + ms;
    if (await this.options.worker.waitLocal(executionId, ms)) return;
    while (systemClock.now() < until) {
      const status = await this.options.executions.statusOf(executionId);
      if (status !== 'running') return;
      await systemClock.sleep(Math.min(WAIT_POLL_MS, until - systemClock.now()));
    }
  }

  private now(): Date {
    return new Date(this.options.clock.now());
  }

  private async read(tenantId: string, workflowId: string, executionId: string): Promise<ExecutionWithNodes> {
    const found = await this.options.executions.find(tenantId, workflowId, executionId);
    if (!found) throw DomainError.notFound('Execution');
    return found;
  }
}

function refuseDecision(outcome: DecisionOutcome, nodeId: string): void {
  switch (outcome.kind) {
    case 'decided':
      return;
    case 'no_execution':
      throw DomainError.notFound('Execution');
    case 'no_node':
      throw DomainError.notFound('Node');
    case 'not_approval':
      throw new DomainError('conflict', `Node ${nodeId} is a ${outcome.type} node; only approval nodes take a decision.`);
    case 'finished':
      throw new DomainError('conflict', `The execution has finished (${outcome.status}); its approvals can no longer be decided.`);
    case 'not_waiting':
      throw new DomainError('conflict', outcome.status === 'completed' ? `Node ${nodeId} has been decided already.` : `Node ${nodeId} is not waiting for a decision (it is ${outcome.status}).`);
  }
}

function refusePaused(workflow: Workflow): void {
  if (workflow.status === 'paused') throw new DomainError('conflict', 'The workflow is paused; resume it to run it.');
}

/** The input of an execution: a JSON object (absent: `{}`). */
function parseInput(inputJson: string | undefined, errors: FieldErrors): Record<string, unknown> {
  if (inputJson === undefined || inputJson === '') return {};
  let input: unknown;
  try {
    input = JSON.parse(inputJson) as unknown;
  } catch {
    errors.add('input', 'must be JSON');
  }
  if (input !== undefined && (typeof input !== 'object' || input === null || Array.isArray(input))) errors.add('input', 'must be an object');
  return input as Record<string, unknown>;
}

/**
 * The triggers a caller of `execute` may name. `webhook`, `schedule` and `retry` are the runner's
 * own: a caller naming them would make an execution's record say something that did not happen.
 */
const CALLER_TRIGGERS = ['manual', 'tool'] as const satisfies readonly ExecutionTrigger[];
type CallerTrigger = (typeof CALLER_TRIGGERS)[number];

function parseTrigger(trigger: string | undefined, errors: FieldErrors): CallerTrigger {
  if (trigger === undefined || trigger === '') return 'manual';
  if ((CALLER_TRIGGERS as readonly string[]).includes(trigger)) return trigger as CallerTrigger;
  errors.add('trigger', `must be one of ${CALLER_TRIGGERS.join(', ')}`);
  return 'manual';
}
