import { defineEntity, p } from '@mikro-orm/postgresql';
import type { TraceCarrier } from '@agent-platform/kit/events';
import type { GraphAuthor } from '../agents/agent-chat.js';
import type { WorkflowGraph } from '../workflows/graph.js';

export const EXECUTION_STATUSES = ['running', 'waiting', 'completed', 'failed', 'cancelled'] as const;
/** A running or waiting execution has not finished: it can be cancelled, and its approvals decided. */
export const UNFINISHED_STATUSES = ['running', 'waiting'] as const satisfies readonly ExecutionStatus[];
export type ExecutionStatus = (typeof EXECUTION_STATUSES)[number];

/** `tool`: an agent's workflow tool ran it during a chat turn (decisions §12). */
export const EXECUTION_TRIGGERS = ['manual', 'webhook', 'schedule', 'retry', 'tool'] as const;
export type ExecutionTrigger = (typeof EXECUTION_TRIGGERS)[number];

/** Stored node states; `pending` is the absence of a row. */
export const NODE_STATUSES = ['running', 'waiting', 'completed', 'failed', 'skipped'] as const;
export type StoredNodeStatus = (typeof NODE_STATUSES)[number];
export type NodeStatus = 'pending' | StoredNodeStatus;

/** What an inbound webhook request shows expressions as `request`. */
export interface InboundRequest {
  query: Record<string, string | string[]>;
  headers: Record<string, string>;
}

export interface ExecutionFailure {
  /** Empty when the execution as a whole failed (time-out, runner lost). */
  node_id: string;
  message: string;
}

export const ExecutionSchema = defineEntity({
  name: 'Execution',
  tableName: 'executions',
  properties: {
    id: p.string().primary(),
    tenantId: p.string(),
    workflowId: p.string(),
    status: p.enum(EXECUTION_STATUSES),
    trigger: p.enum(EXECUTION_TRIGGERS),
    /** The graph the execution started with; later edits of the workflow do not reach it. */
    graph: p.json<WorkflowGraph>().columnType('jsonb').lazy(),
    /** The workflow's version that `graph` is (decisions §13.1). */
    workflowVersion: p.integer(),
    input: p.json<unknown>().columnType('jsonb'),
    request: p.json<InboundRequest>().columnType('jsonb').strictNullable(),
    output: p.json<unknown>().columnType('jsonb').strictNullable(),
    error: p.json<ExecutionFailure>().columnType('jsonb').strictNullable(),
    startedAt: p.datetime(),
    completedAt: p.datetime().strictNullable(),
    durationMs: p.integer().strictNullable(),
    /** Past it, the execution fails with a time-out, whoever runs it. */
    deadlineAt: p.datetime(),
    /** The runner that holds the execution, until `leaseUntil`; then any runner may claim it. */
    leaseOwner: p.string().strictNullable().hidden(),
    leaseUntil: p.datetime().strictNullable().hidden(),
    /** A waiting execution is claimed again from this time (decisions §13). */
    wakeAt: p.datetime().strictNullable().hidden(),
    /** The workflow's creator. */
    createdBy: p.string().hidden(),
    /** Who saved the graph it runs, as the workflow said at its start: agent nodes chat as this principal. */
    graphAuthor: p.json<GraphAuthor>().columnType('jsonb').strictNullable().hidden(),
    /** W3C trace context of the call that started it; its nodes run in that trace. */
    traceContext: p.json<TraceCarrier>().columnType('json').nullable().hidden().lazy(),
  },
});

export class Execution extends ExecutionSchema.class {}
ExecutionSchema.setClass(Execution);

export const NodeExecutionSchema = defineEntity({
  name: 'NodeExecution',
  tableName: 'node_executions',
  properties: {
    executionId: p.string().primary(),
    nodeId: p.string().primary(),
    status: p.enum(NODE_STATUSES),
    startedAt: p.datetime().strictNullable(),
    completedAt: p.datetime().strictNullable(),
    durationMs: p.integer().strictNullable(),
    output: p.json<unknown>().columnType('jsonb').strictNullable(),
    error: p.text().strictNullable(),
    /** Runs of the node so far: 0 when skipped, more than 1 after retries. */
    attempts: p.integer(),
    /** A waiting node: when its approval times out or its wait ends. */
    wakeAt: p.datetime().strictNullable(),
  },
});

export class NodeExecution extends NodeExecutionSchema.class {}
NodeExecutionSchema.setClass(NodeExecution);

/** A schedule tick that started an execution; its key makes a tick fire once across replicas. */
export const ScheduleTickSchema = defineEntity({
  name: 'ScheduleTick',
  tableName: 'schedule_ticks',
  properties: {
    workflowId: p.string().primary(),
    tickAt: p.datetime().primary(),
    executionId: p.string(),
  },
});

export class ScheduleTick extends ScheduleTickSchema.class {}
ScheduleTickSchema.setClass(ScheduleTick);
