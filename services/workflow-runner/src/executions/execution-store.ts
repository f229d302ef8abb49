import type { EntityManager } from '@agent-platform/kit/db';
import { captureTraceContext, eventSubject, type EventEnvelope } from '@agent-platform/kit/events';
import type { WorkflowGraph } from '../workflows/graph.js';
import type { ExecutionFailure, ExecutionStatus, ExecutionTrigger, InboundRequest, StoredNodeStatus } from './executions.entity.js';

/** What running an execution needs, as accepted or as claimed from the table. */
export interface RunnableExecution {
  id: string;
  tenantId: string;
  workflowId: string;
  trigger: ExecutionTrigger;
  graph: WorkflowGraph;
  input: unknown;
  request: InboundRequest | null;
  startedAt: Date;
  deadlineAt: Date;
  createdBy: string;
  /** Node results recorded before (a claimed execution another runner began). */
  recorded: NodeRecord[];
}

export interface NodeRecord {
  nodeId: string;
  status: StoredNodeStatus;
  startedAt: Date | null;
  completedAt: Date | null;
  durationMs: number | null;
  output: unknown;
  error: string | null;
}

export interface Finish {
  status: Exclude<ExecutionStatus, 'running'>;
  output: unknown;
  error: ExecutionFailure | null;
  completedAt: Date;
  durationMs: number;
}

interface ExecutionRow {
  id: string;
  tenant_id: string;
  workflow_id: string;
  trigger: ExecutionTrigger;
  graph: WorkflowGraph;
  input: unknown;
  request: InboundRequest | null;
  started_at: Date;
  deadline_at: Date;
  created_by: string;
}

interface NodeRow {
  execution_id: string;
  node_id: string;
  status: StoredNodeStatus;
  started_at: Date | null;
  completed_at: Date | null;
  duration_ms: number | null;
  output: unknown;
  error: string | null;
}

/** Node records as one JSON parameter, unpacked in SQL by jsonb_to_recordset. */
const NODE_RECORDSET = `jsonb_to_recordset(?::jsonb) as r("node_id" text, "status" text, "started_at" timestamptz, "completed_at" timestamptz, "duration_ms" integer, "output" jsonb, "error" text)`;
const NODE_UPSERT = `on conflict ("execution_id", "node_id") do update set "status" = excluded."status", "started_at" = excluded."started_at",
  "completed_at" = excluded."completed_at", "duration_ms" = excluded."duration_ms", "output" = excluded."output", "error" = excluded."error"`;

/**
 * The durable state of executions in flight: acceptance, node results, leases and the final
 * record. Each write is one statement (so one round trip, atomic without an explicit transaction)
 * and, past acceptance, applies only while the writer still holds the lease of a running
 * execution: a runner that lost it (cancelled, deleted, taken over) changes nothing. Times of
 * leases come from the database clock, so replicas with skewed clocks agree on expiry.
 */
export class ExecutionStore {
  private readonly em: EntityManager;

  /** `em` is the ORM's root manager; every operation runs in its own fork. */
  constructor(em: EntityManager) {
    this.em = em;
  }

  /**
   * Records a new running execution with its `started` event. `owner` null leaves it unleased, for
   * whichever runner claims it first. With `tick`, only if that schedule tick has not started one
   * yet; answers whether the execution was recorded.
   */
  async accept(execution: Omit<RunnableExecution, 'recorded'>, owner: string | null, leaseMs: number, started: EventEnvelope<object>, tick?: Date): Promise<boolean> {
    // A schedule tick is claimed in the same statement: of the runners that saw it, the one whose
    // tick row went in starts the execution; for the others nothing is written.
    const [row] = await this.em.fork().execute<{ accepted: number }[]>(
      `with "tick" as (
         insert into "schedule_ticks" ("workflow_id", "tick_at", "execution_id") select ?, ?::timestamptz, ? where ?::boolean
         on conflict do nothing
         returning 1
       ), "execution" as (
         insert into "executions" ("id", "tenant_id", "workflow_id", "status", "trigger", "graph", "input", "request", "started_at", "deadline_at", "lease_owner", "lease_until", "created_by")
         select ?, ?, ?, 'running', ?, ?::jsonb, ?::jsonb, ?::jsonb, ?::timestamptz, ?::timestamptz, ?, case when ?::text is null then null else now() + make_interval(secs => ?) end, ?
         where not ?::boolean or exists (select 1 from "tick")
         returning "id"
       ), "event" as (
         insert into "outbox" ("id", "subject", "payload", "trace_context", "created_at") select ?, ?, ?::json, ?::json, ?::timestamptz from "execution"
       )
       select count(*)::int as "accepted" from "execution"`,
      [
        execution.workflowId, tick?.toISOString() ?? null, execution.id, tick !== undefined,
        execution.id, execution.tenantId, execution.workflowId, execution.trigger, JSON.stringify(execution.graph), JSON.stringify(execution.input),
        execution.request === null ? null : JSON.stringify(execution.request), execution.startedAt.toISOString(), execution.deadlineAt.toISOString(),
        owner, owner, leaseMs / 1_000, execution.createdBy, tick !== undefined,
        ...outboxValues(started),
      ],
    );
    return (row?.accepted ?? 0) > 0;
  }

  /** Upserts node records while `owner` holds the running execution; false when it no longer does. */
  async saveNodes(executionId: string, owner: string, records: readonly NodeRecord[]): Promise<boolean> {
    const [row] = await this.em.fork().execute<{ held: boolean }[]>(
      `with "held" as (select 1 from "executions" where "id" = ? and "lease_owner" = ? and "status" = 'running'),
       "saved" as (
         insert into "node_executions" ("execution_id", "node_id", "status", "started_at", "completed_at", "duration_ms", "output", "error")
         select ?, r.* from ${NODE_RECORDSET} where exists (select 1 from "held")
         ${NODE_UPSERT}
       )
       select exists (select 1 from "held") as "held"`,
      [executionId, owner, executionId, nodesJson(records)],
    );
    return row?.held === true;
  }

  /**
   * The final record: status, output, the last node records and the completed/failed event, in one
   * statement, and the lease released. False when `owner` no longer held the running execution.
   */
  async finish(executionId: string, owner: string, finish: Finish, records: readonly NodeRecord[], event: EventEnvelope<object> | null): Promise<boolean> {
    const [row] = await this.em.fork().execute<{ finished: number }[]>(
      `with "finished" as (
         update "executions" set "status" = ?, "output" = ?::jsonb, "error" = ?::jsonb, "completed_at" = ?::timestamptz, "duration_ms" = ?,
           "lease_owner" = null, "lease_until" = null
         where "id" = ? and "lease_owner" = ? and "status" = 'running'
         returning "id"
       ), "saved" as (
         insert into "node_executions" ("execution_id", "node_id", "status", "started_at", "completed_at", "duration_ms", "output", "error")
         select ?, r.* from ${NODE_RECORDSET} where exists (select 1 from "finished")
         ${NODE_UPSERT}
       ), "event" as (
         insert into "outbox" ("id", "subject", "payload", "trace_context", "created_at") select ?, ?, ?::json, ?::json, ?::timestamptz from "finished" where ?::boolean
       )
       select count(*)::int as "finished" from "finished"`,
      [
        finish.status, jsonOrNull(finish.output), finish.error === null ? null : JSON.stringify(finish.error), finish.completedAt.toISOString(), finish.durationMs,
        executionId, owner,
        executionId, nodesJson(records),
        ...(event ? outboxValues(event) : [null, null, null, null, null]), event !== null,
      ],
    );
    return (row?.finished ?? 0) > 0;
  }

  /**
   * Takes up to `limit` running executions nobody holds (never leased, or the lease expired: the
   * runner died) and leases them to `owner`, with what was recorded of their nodes.
   */
  async claim(owner: string, limit: number, leaseMs: number): Promise<RunnableExecution[]> {
    const rows = await this.em.fork().execute<ExecutionRow[]>(
      `with "picked" as (
         select "id" from "executions"
         where "status" = 'running' and ("lease_until" is null or "lease_until" < now())
         order by "lease_until" nulls first, "started_at"
         limit ?
         for update skip locked
       )
       update "executions" e set "lease_owner" = ?, "lease_until" = now() + make_interval(secs => ?)
       from "picked" where e."id" = "picked"."id"
       returning e."id", e."tenant_id", e."workflow_id", e."trigger", e."graph", e."input", e."request", e."started_at", e."deadline_at", e."created_by"`,
      [limit, owner, leaseMs / 1_000],
    );
    if (rows.length === 0) return [];
    const nodes = await this.em.fork().execute<NodeRow[]>(`select * from "node_executions" where "execution_id" in (?)`, [rows.map((row) => row.id)]);
    return rows.map((row) => ({
      id: row.id,
      tenantId: row.tenant_id,
      workflowId: row.workflow_id,
      trigger: row.trigger,
      graph: row.graph,
      input: row.input,
      request: row.request,
      startedAt: new Date(row.started_at),
      deadlineAt: new Date(row.deadline_at),
      createdBy: row.created_by,
      recorded: nodes.filter((node) => node.execution_id === row.id).map(nodeRecordOf),
    }));
  }

  /** Extends the leases `owner` holds among `ids`; answers the ids it still holds. */
  async renew(owner: string, ids: readonly string[], leaseMs: number): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows = await this.em.fork().execute<{ id: string }[]>(
      `update "executions" set "lease_until" = now() + make_interval(secs => ?) where "id" in (?) and "lease_owner" = ? and "status" = 'running' returning "id"`,
      [leaseMs / 1_000, ids, owner],
    );
    return new Set(rows.map((row) => row.id));
  }

  /** Gives an execution back unfinished (shutdown): any runner may claim it at once. */
  async release(executionId: string, owner: string): Promise<void> {
    await this.em.fork().execute(
      `update "executions" set "lease_owner" = null, "lease_until" = null where "id" = ? and "lease_owner" = ? and "status" = 'running'`,
      [executionId, owner],
      'run',
    );
  }
}

function outboxValues(event: EventEnvelope<object>): unknown[] {
  const trace = captureTraceContext();
  return [event.id, eventSubject(event), JSON.stringify(event), trace === null ? null : JSON.stringify(trace), event.created_at];
}

function jsonOrNull(value: unknown): string | null {
  return value === undefined || value === null ? null : JSON.stringify(value);
}

function nodesJson(records: readonly NodeRecord[]): string {
  return JSON.stringify(
    records.map((record) => ({
      node_id: record.nodeId,
      status: record.status,
      started_at: record.startedAt?.toISOString() ?? null,
      completed_at: record.completedAt?.toISOString() ?? null,
      duration_ms: record.durationMs,
      output: record.output ?? null,
      error: record.error,
    })),
  );
}

export function nodeRecordOf(row: NodeRow): NodeRecord {
  return {
    nodeId: row.node_id,
    status: row.status,
    startedAt: row.started_at === null ? null : new Date(row.started_at),
    completedAt: row.completed_at === null ? null : new Date(row.completed_at),
    durationMs: row.duration_ms,
    output: row.output,
    error: row.error,
  };
}

export type { NodeRow };
