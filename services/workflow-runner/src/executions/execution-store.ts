import { PreparedStatement, type EntityManager } from '@agent-platform/kit/db';
import type { BacklogReading } from '@agent-platform/kit/telemetry';
import { captureTraceContext, eventSubject, parseTraceCarrier, type EventEnvelope, type TraceCarrier } from '@agent-platform/kit/events';
import { Batcher } from '@agent-platform/kit/work';
import type { GraphAuthor } from '../agents/agent-chat.js';
import type { WorkflowGraph } from '../workflows/graph.js';
import type { ExecutionFailure, ExecutionStatus, ExecutionTrigger, InboundRequest, StoredNodeStatus } from './executions.entity.js';

/** What running an execution needs, as accepted or as claimed from the table. */
export interface RunnableExecution {
  id: string;
  tenantId: string;
  workflowId: string;
  trigger: ExecutionTrigger;
  graph: WorkflowGraph;
  /** The workflow's version that `graph` is (decisions §13.1). */
  workflowVersion: number;
  input: unknown;
  request: InboundRequest | null;
  startedAt: Date;
  deadlineAt: Date;
  createdBy: string;
  /** Who saved the graph, as the workflow said at the start: agent nodes chat as it. Null: saved before it was kept. */
  graphAuthor: GraphAuthor | null;
  /** The trace of the call that started it, which its nodes continue. */
  trace: TraceCarrier | null;
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
  /** Runs so far: 0 when skipped, 1 for one try, more after retries. */
  attempts: number;
  /** A waiting node: when its approval times out or its wait ends. */
  wakeAt: Date | null;
}

export interface Finish {
  status: Exclude<ExecutionStatus, 'running' | 'waiting'>;
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
  workflow_version: number;
  input: unknown;
  request: InboundRequest | null;
  started_at: Date;
  deadline_at: Date;
  created_by: string;
  graph_author: GraphAuthor | null;
  trace: string | null;
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
  attempts: number;
  wake_at: Date | null;
}

/** Node records as one JSON parameter, unpacked in SQL by jsonb_to_recordset. */
const NODE_RECORDSET = `jsonb_to_recordset(?::jsonb) as n("execution_id" text, "node_id" text, "status" text, "started_at" timestamptz, "completed_at" timestamptz, "duration_ms" integer, "output" jsonb, "error" text,
  "attempts" integer, "wake_at" timestamptz)`;
const NODE_COLUMNS = `"execution_id", "node_id", "status", "started_at", "completed_at", "duration_ms", "output", "error", "attempts", "wake_at"`;
const NODE_UPSERT = `on conflict ("execution_id", "node_id") do update set "status" = excluded."status", "started_at" = excluded."started_at",
  "completed_at" = excluded."completed_at", "duration_ms" = excluded."duration_ms", "output" = excluded."output", "error" = excluded."error",
  "attempts" = excluded."attempts", "wake_at" = excluded."wake_at"`;
/** The CTE that upserts the node records of the JSON parameter whose executions `held` (a CTE's name) lists. */
function savedNodesOf(held: string): string {
  return `"saved" as (
         insert into "node_executions" (${NODE_COLUMNS})
         select n.* from ${NODE_RECORDSET} where n."execution_id" in (select "id" from "${held}")
         ${NODE_UPSERT}
       )`;
}

/** Writes in one statement at most this many executions' worth. */
const MAX_BATCH = 200;

/*
 * The group-committed writes, as named prepared statements: each carries a batch as JSON, and as
 * values the batch stays out of the SQL text (MikroORM would escape it into the statement, and
 * PostgreSQL parse it, on every call).
 */
const acceptStatement = new PreparedStatement<{ id: string }>('runner_accept_executions', `
      with "rows" as (
         select * from jsonb_to_recordset(?::jsonb) as r("id" text, "tenant_id" text, "workflow_id" text, "trigger" text, "graph" jsonb, "workflow_version" integer,
           "input" jsonb, "request" jsonb, "started_at" timestamptz, "deadline_at" timestamptz, "created_by" text, "graph_author" jsonb, "tick_at" timestamptz, "require_active" boolean,
           "workflow_updated_at" timestamptz, "event_id" text, "subject" text, "payload" text, "trace_context" text)
       ), "allowed" as (
         select r.* from "rows" r join "workflows" w on w."id" = r."workflow_id"
         where (not r."require_active" or w."status" = 'active') and (r."workflow_updated_at" is null or w."updated_at" = r."workflow_updated_at")
       ), "ticks" as (
         insert into "schedule_ticks" ("workflow_id", "tick_at", "execution_id")
         select "workflow_id", "tick_at", "id" from "allowed" where "tick_at" is not null
         on conflict do nothing
         returning "execution_id"
       ), "execution" as (
         insert into "executions" ("id", "tenant_id", "workflow_id", "status", "trigger", "graph", "workflow_version", "input", "request", "started_at", "deadline_at", "lease_owner", "lease_until", "created_by", "graph_author", "trace_context")
         select a."id", a."tenant_id", a."workflow_id", 'running', a."trigger", a."graph", a."workflow_version", a."input", a."request", a."started_at", a."deadline_at", ?, now() + make_interval(secs => ?), a."created_by", a."graph_author", a."trace_context"::json
         from "allowed" a where a."tick_at" is null or a."id" in (select "execution_id" from "ticks")
         returning "id"
       ), "event" as (
         insert into "outbox" ("id", "subject", "payload", "trace_context", "created_at")
         select a."event_id", a."subject", a."payload"::json, a."trace_context"::json, a."started_at" from "allowed" a join "execution" e on e."id" = a."id"
       )
       select "id" from "execution"`);

const nodesStatement = new PreparedStatement<{ id: string }>('runner_save_nodes', `
      with "held" as (
         select "id" from "executions" where "id" in (select jsonb_array_elements_text(?::jsonb)) and "lease_owner" = ? and "status" = 'running'
       ), ${savedNodesOf('held')}, "events" as (
         insert into "outbox" ("id", "subject", "payload", "trace_context", "created_at")
         select e."id", e."subject", e."payload"::json, e."trace_context"::json, e."created_at"
         from jsonb_to_recordset(?::jsonb) as e("execution_id" text, "id" text, "subject" text, "payload" text, "trace_context" text, "created_at" timestamptz)
         where e."execution_id" in (select "id" from "held")
       )
       select "id" from "held"`);

const finishStatement = new PreparedStatement<{ id: string }>('runner_finish_executions', `
      with "rows" as (
         select * from jsonb_to_recordset(?::jsonb) as r("id" text, "status" text, "output" jsonb, "error" jsonb, "completed_at" timestamptz, "duration_ms" integer,
           "event_id" text, "subject" text, "payload" text, "event_created_at" timestamptz, "trace_context" text)
       ), "finished" as (
         update "executions" e set "status" = r."status", "output" = r."output", "error" = r."error", "completed_at" = r."completed_at",
           "duration_ms" = r."duration_ms", "lease_owner" = null, "lease_until" = null, "wake_at" = null
         from "rows" r
         where e."id" = r."id" and e."lease_owner" = ? and e."status" = 'running'
         returning e."id"
       ), ${savedNodesOf('finished')}, "events" as (
         insert into "outbox" ("id", "subject", "payload", "trace_context", "created_at")
         select r."event_id", r."subject", r."payload"::json, r."trace_context"::json, r."event_created_at"
         from "rows" r join "finished" f on f."id" = r."id" where r."event_id" is not null
       )
       select "id" from "finished"`);

const parkStatement = new PreparedStatement<{ id: string }>('runner_park_executions', `
      with "rows" as (
         select * from jsonb_to_recordset(?::jsonb) as r("id" text, "wake_at" timestamptz)
       ), "parked" as (
         update "executions" e set "status" = 'waiting', "lease_owner" = null, "lease_until" = null, "wake_at" = coalesce(e."wake_at", r."wake_at")
         from "rows" r
         where e."id" = r."id" and e."lease_owner" = ? and e."status" = 'running'
         returning e."id"
       ), ${savedNodesOf('parked')}
       select "id" from "parked"`);

export interface Acceptance {
  execution: Omit<RunnableExecution, 'recorded'>;
  started: EventEnvelope<object>;
  /** A schedule tick: accepted only if no runner has started this tick yet. */
  tick?: Date;
  /** Accepted only while the workflow is active (inbound webhooks). */
  requireActive?: boolean;
  /** Accepted only while the workflow is still as it was read (its `updated_at`). */
  workflowUpdatedAt?: Date;
}

interface NodeWrite {
  executionId: string;
  records: readonly NodeRecord[];
}

/** Node records with events that go out only if they are written (a node starts waiting). */
interface ParkWrite extends NodeWrite {
  wakeAt: Date;
}

interface NodeWriteWithEvents extends NodeWrite {
  events: readonly EventEnvelope<object>[];
}

/** The trace context of the call that submitted it, as JSON text: each event continues its own trace. */
type Traced<T> = T & { trace: string | null };

interface FinishWrite {
  executionId: string;
  finish: Finish;
  records: readonly NodeRecord[];
  event: EventEnvelope<object> | null;
}

/**
 * The durable state of executions in flight: acceptance, node results, leases and the final
 * record. Writes are group-committed (kit's Batcher): what arrives while a statement runs goes in
 * the next one, so under load one round trip carries many executions. Each statement is atomic on
 * its own; past acceptance it changes only executions this runner (`owner`) still holds running, so
 * a runner that lost one (cancelled, deleted, taken over) changes nothing. Lease times come from
 * the database clock, so replicas with skewed clocks agree on expiry.
 */
const backlogStatement = new PreparedStatement<{ due: number; oldest: number }>(
  'workflows_backlog',
  `select count(*)::int as "due", coalesce(extract(epoch from now() - min("since")), 0)::float8 as "oldest" from (
     select coalesce("lease_until", "started_at") as "since" from "executions" where "status" = 'running' and ("lease_until" is null or "lease_until" < now())
     union all
     select "wake_at" from "executions" where "status" = 'waiting' and "wake_at" <= now()
   ) "due"`,
);

export class ExecutionStore {
  private readonly em: EntityManager;
  private readonly owner: string;
  private readonly leaseSeconds: number;
  private readonly accepts: Batcher<Traced<Acceptance>, boolean>;
  private readonly executionTimeoutSeconds: number;
  private readonly nodeWrites: Batcher<Traced<NodeWriteWithEvents>, boolean>;
  private readonly finishes: Batcher<Traced<FinishWrite>, boolean>;
  private readonly parks: Batcher<ParkWrite, boolean>;

  /** `em` is the ORM's root manager; every operation runs in its own fork. `owner` is this runner's lease id. */
  constructor(em: EntityManager, options: { owner: string; leaseMs: number; executionTimeoutMs: number }) {
    this.em = em;
    this.owner = options.owner;
    this.leaseSeconds = options.leaseMs / 1_000;
    this.executionTimeoutSeconds = options.executionTimeoutMs / 1_000;
    this.accepts = new Batcher((batch) => this.writeAccepts(batch), { maxBatch: MAX_BATCH });
    this.nodeWrites = new Batcher((batch) => this.writeNodes(batch), { maxBatch: MAX_BATCH });
    this.finishes = new Batcher((batch) => this.writeFinishes(batch), { maxBatch: MAX_BATCH });
    this.parks = new Batcher((batch) => this.writeParks(batch), { maxBatch: MAX_BATCH });
  }

  /**
   * Records a new running execution, leased to this runner, with its `started` event; answers
   * whether it was recorded (false: the tick was taken, the workflow is gone, not active when that
   * was required, or no longer at the version given).
   */
  accept(acceptance: Acceptance): Promise<boolean> {
    return this.accepts.submit({ ...acceptance, trace: traceJson() });
  }

  /**
   * Upserts node records, with `events` into the outbox, while this runner holds the running
   * execution; false when it no longer does (and nothing was written).
   */
  saveNodes(executionId: string, records: readonly NodeRecord[], events: readonly EventEnvelope<object>[] = []): Promise<boolean> {
    return this.nodeWrites.submit({ executionId, records, events, trace: events.length === 0 ? null : traceJson() });
  }

  /**
   * Parks a running execution this runner holds: its records are written, its lease given up, and
   * it sleeps until `wakeAt` — or at once when a decision landed while it ran, which left its own
   * earlier `wake_at` on the row (ExecutionsRepository.decide). A decision racing the park locks
   * the row: if it commits first, this update re-reads the row and keeps its `wake_at`; if it comes
   * second, it finds the execution waiting and wakes it (decisions §13.4). False when no longer held.
   */
  park(executionId: string, records: readonly NodeRecord[], wakeAt: Date): Promise<boolean> {
    return this.parks.submit({ executionId, records, wakeAt });
  }

  private async writeParks(batch: readonly ParkWrite[]): Promise<boolean[]> {
    const rows = batch.map(({ executionId, wakeAt }) => ({ id: executionId, wake_at: wakeAt.toISOString() }));
    const parked = await parkStatement.rows(this.em, [JSON.stringify(rows), this.owner, nodesJson(batch)]);
    const ids = new Set(parked.map((row) => row.id));
    return batch.map((write) => ids.has(write.executionId));
  }

  /**
   * Ends a waiting node whose time came (an approval timed out, a wait elapsed) with `record`,
   * unless a decision reached it first: answers the record that stands, or undefined when this
   * runner no longer holds the execution.
   */
  async settleWaiting(executionId: string, record: NodeRecord): Promise<NodeRecord | undefined> {
    const em = this.em.fork();
    const [row] = await em.execute<NodeRow[]>(
      `with "held" as (
         select "id" from "executions" where "id" = ? and "lease_owner" = ? and "status" = 'running'
       ), "settled" as (
         update "node_executions" set "status" = ?, "completed_at" = ?::timestamptz, "duration_ms" = ?, "output" = ?::jsonb, "wake_at" = null
         where "execution_id" in (select "id" from "held") and "node_id" = ? and "status" = 'waiting'
         returning *
       )
       select * from "settled"
       union all
       select n.* from "node_executions" n where n."execution_id" in (select "id" from "held") and n."node_id" = ? and n."status" <> 'waiting'`,
      [executionId, this.owner, record.status, record.completedAt?.toISOString() ?? null, record.durationMs, JSON.stringify(record.output ?? null), record.nodeId, record.nodeId],
    );
    return row === undefined ? undefined : nodeRecordOf(row);
  }

  /**
   * The final record: status, output, the last node records and the completed/failed event, with
   * the lease released. False when this runner no longer held the running execution.
   */
  finish(executionId: string, finish: Finish, records: readonly NodeRecord[], event: EventEnvelope<object> | null): Promise<boolean> {
    return this.finishes.submit({ executionId, finish, records, event, trace: traceJson() });
  }

  private async writeAccepts(batch: readonly Traced<Acceptance>[]): Promise<boolean[]> {
    const rows = batch.map(({ execution, started, tick, requireActive, workflowUpdatedAt, trace }) => ({
      id: execution.id,
      tenant_id: execution.tenantId,
      workflow_id: execution.workflowId,
      trigger: execution.trigger,
      graph: execution.graph,
      workflow_version: execution.workflowVersion,
      input: execution.input,
      request: execution.request,
      started_at: execution.startedAt.toISOString(),
      deadline_at: execution.deadlineAt.toISOString(),
      created_by: execution.createdBy,
      graph_author: execution.graphAuthor,
      tick_at: tick?.toISOString() ?? null,
      require_active: requireActive === true,
      workflow_updated_at: workflowUpdatedAt?.toISOString() ?? null,
      event_id: started.id,
      subject: eventSubject(started),
      payload: JSON.stringify(started),
      trace_context: trace,
    }));
    const accepted = await acceptStatement.rows(this.em, [JSON.stringify(rows), this.owner, this.leaseSeconds]);
    const ids = new Set(accepted.map((row) => row.id));
    return batch.map(({ execution }) => ids.has(execution.id));
  }

  private async writeNodes(batch: readonly Traced<NodeWriteWithEvents>[]): Promise<boolean[]> {
    const held = await nodesStatement.rows(this.em, [JSON.stringify(batch.map((write) => write.executionId)), this.owner, nodesJson(batch), eventsJson(batch)]);
    const ids = new Set(held.map((row) => row.id));
    return batch.map((write) => ids.has(write.executionId));
  }

  private async writeFinishes(batch: readonly Traced<FinishWrite>[]): Promise<boolean[]> {
    const rows = batch.map(({ executionId, finish, event, trace }) => ({
      id: executionId,
      status: finish.status,
      output: finish.output ?? null,
      error: finish.error,
      completed_at: finish.completedAt.toISOString(),
      duration_ms: finish.durationMs,
      event_id: event?.id ?? null,
      subject: event ? eventSubject(event) : null,
      payload: event ? JSON.stringify(event) : null,
      event_created_at: event?.created_at ?? null,
      trace_context: trace,
    }));
    const finished = await finishStatement.rows(this.em, [JSON.stringify(rows), this.owner, nodesJson(batch.map(({ executionId, records }) => ({ executionId, records })))]);
    const ids = new Set(finished.map((row) => row.id));
    return batch.map((write) => ids.has(write.executionId));
  }

  /**
   * Executions a runner should be running and none holds: running ones never leased or whose lease
   * expired, and waiting ones whose time came (the depth KEDA scales the runners on). The oldest's
   * age counts from its start, its lapsed lease or its wake-up time.
   */
  async backlog(): Promise<BacklogReading> {
    const [row] = await backlogStatement.rows(this.em.fork(), []);
    return { due: row?.due ?? 0, oldestSeconds: row?.oldest ?? 0 };
  }

  /**
   * Takes up to `limit` executions nobody holds — running ones never leased or whose lease expired
   * (the runner died), and waiting ones whose time came (decided, timed out, timer due) — and leases
   * them to this runner as running, with what was recorded of their nodes. A woken execution gets a
   * fresh time-out: the time it waited is not time it ran.
   */
  async claim(limit: number): Promise<RunnableExecution[]> {
    const rows = await this.em.fork().execute<ExecutionRow[]>(
      `with "orphaned" as (
         select "id" from "executions"
         where "status" = 'running' and ("lease_until" is null or "lease_until" < now())
         order by "lease_until" nulls first, "started_at"
         limit ?
         for update skip locked
       ), "due" as (
         select "id" from "executions"
         where "status" = 'waiting' and "wake_at" <= now()
         order by "wake_at"
         limit ?
         for update skip locked
       ), "picked" as (
         select "id" from "orphaned" union all select "id" from "due" limit ?
       )
       update "executions" e set "lease_owner" = ?, "lease_until" = now() + make_interval(secs => ?),
         "deadline_at" = case when e."status" = 'waiting' then now() + make_interval(secs => ?) else e."deadline_at" end,
         "status" = 'running', "wake_at" = null
       from "picked" where e."id" = "picked"."id"
       returning e."id", e."tenant_id", e."workflow_id", e."trigger", e."graph", e."workflow_version", e."input", e."request", e."started_at", e."deadline_at", e."created_by", e."graph_author", e."trace_context"::text as "trace"`,
      [limit, limit, limit, this.owner, this.leaseSeconds, this.executionTimeoutSeconds],
    );
    if (rows.length === 0) return [];
    const nodes = await this.em.fork().execute<NodeRow[]>(`select * from "node_executions" where "execution_id" in (?)`, [rows.map((row) => row.id)]);
    return rows.map((row) => ({
      id: row.id,
      tenantId: row.tenant_id,
      workflowId: row.workflow_id,
      trigger: row.trigger,
      graph: row.graph,
      workflowVersion: row.workflow_version,
      input: row.input,
      request: row.request,
      startedAt: new Date(row.started_at),
      deadlineAt: new Date(row.deadline_at),
      createdBy: row.created_by,
      graphAuthor: row.graph_author,
      trace: parseTraceCarrier(row.trace),
      recorded: nodes.filter((node) => node.execution_id === row.id).map(nodeRecordOf),
    }));
  }

  /** Extends the leases this runner holds among `ids`; answers the ids it still holds. */
  async renew(ids: readonly string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows = await this.em.fork().execute<{ id: string }[]>(
      `update "executions" set "lease_until" = now() + make_interval(secs => ?) where "id" in (?) and "lease_owner" = ? and "status" = 'running' returning "id"`,
      [this.leaseSeconds, ids, this.owner],
    );
    return new Set(rows.map((row) => row.id));
  }

  /** Gives an execution back unfinished (shutdown): any runner may claim it at once. */
  async release(executionId: string): Promise<void> {
    await this.em.fork().execute(
      `update "executions" set "lease_owner" = null, "lease_until" = null where "id" = ? and "lease_owner" = ? and "status" = 'running'`,
      [executionId, this.owner],
      'run',
    );
  }
}

function eventsJson(writes: readonly Traced<NodeWriteWithEvents>[]): string {
  return JSON.stringify(
    writes.flatMap(({ executionId, events, trace }) =>
      events.map((event) => ({ execution_id: executionId, id: event.id, subject: eventSubject(event), payload: JSON.stringify(event), trace_context: trace, created_at: event.created_at })),
    ),
  );
}

/** The trace context of the writing call, as JSON text for the outbox (null outside a trace). */
function traceJson(): string | null {
  const trace = captureTraceContext();
  return trace === null ? null : JSON.stringify(trace);
}

function nodesJson(writes: readonly NodeWrite[]): string {
  return JSON.stringify(
    writes.flatMap(({ executionId, records }) =>
      records.map((record) => ({
        execution_id: executionId,
        node_id: record.nodeId,
        status: record.status,
        started_at: record.startedAt?.toISOString() ?? null,
        completed_at: record.completedAt?.toISOString() ?? null,
        duration_ms: record.durationMs,
        output: record.output ?? null,
        error: record.error,
        attempts: record.attempts,
        wake_at: record.wakeAt?.toISOString() ?? null,
      })),
    ),
  );
}

function nodeRecordOf(row: NodeRow): NodeRecord {
  return {
    nodeId: row.node_id,
    status: row.status,
    startedAt: row.started_at === null ? null : new Date(row.started_at),
    completedAt: row.completed_at === null ? null : new Date(row.completed_at),
    durationMs: row.duration_ms,
    output: row.output,
    error: row.error,
    attempts: row.attempts,
    wakeAt: row.wake_at === null ? null : new Date(row.wake_at),
  };
}

