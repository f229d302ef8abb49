import { PreparedStatement, type EntityManager } from '@agent-platform/kit/db';
import { captureTraceContext, eventSubject, type EventEnvelope, type TraceCarrier } from '@agent-platform/kit/events';
import { Batcher } from '@agent-platform/kit/work';
import type { GraphAuthor } from '../agents/agent-chat.js';
import type { WorkflowGraph } from '../workflows/graph.js';
import type { ExecutionFailure, ExecutionStatus, ExecutionTrigger, InboundRequest } from './executions.entity.js';
import { nodesJson, savedNodesOf, type NodeRecord, type NodeWrite } from './node-records.js';

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

export interface Finish {
  status: Exclude<ExecutionStatus, 'running' | 'waiting'>;
  output: unknown;
  error: ExecutionFailure | null;
  completedAt: Date;
  durationMs: number;
}

/** Writes in one statement at most this many executions' worth. */
export const MAX_BATCH = 200;

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

/** Node records with events that go out only if they are written (a node starts waiting). */
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
 * The durable state of executions in flight: acceptance, node results and the final record (parking
 * is WaitingExecutions', leases ExecutionLeases'). Writes are group-committed (kit's Batcher): what
 * arrives while a statement runs goes in the next one, so under load one round trip carries many
 * executions. Each statement is atomic on its own; past acceptance it changes only executions this
 * runner (`owner`) still holds running, so a runner that lost one (cancelled, deleted, taken over)
 * changes nothing.
 */
export class ExecutionStore {
  private readonly em: EntityManager;
  private readonly owner: string;
  private readonly leaseSeconds: number;
  private readonly accepts: Batcher<Traced<Acceptance>, boolean>;
  private readonly nodeWrites: Batcher<Traced<NodeWriteWithEvents>, boolean>;
  private readonly finishes: Batcher<Traced<FinishWrite>, boolean>;

  /** `em` is the ORM's root manager. `owner` is this runner's lease id, which an accepted execution is leased to for `leaseMs`. */
  constructor(em: EntityManager, options: { owner: string; leaseMs: number }) {
    this.em = em;
    this.owner = options.owner;
    this.leaseSeconds = options.leaseMs / 1_000;
    this.accepts = new Batcher((batch) => this.writeAccepts(batch), { maxBatch: MAX_BATCH });
    this.nodeWrites = new Batcher((batch) => this.writeNodes(batch), { maxBatch: MAX_BATCH });
    this.finishes = new Batcher((batch) => this.writeFinishes(batch), { maxBatch: MAX_BATCH });
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
