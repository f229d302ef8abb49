import type { Clock } from '@agent-platform/kit';
import { PreparedStatement, type EntityManager } from '@agent-platform/kit/db';
import { parseTraceCarrier } from '@agent-platform/kit/events';
import type { BacklogReading } from '@agent-platform/kit/telemetry';
import type { GraphAuthor } from '../agents/agent-chat.js';
import type { WorkflowGraph } from '../workflows/graph.js';
import type { RunnableExecution } from './execution-store.js';
import type { ExecutionTrigger, InboundRequest } from './executions.entity.js';
import { nodeRecordOf, type NodeRow } from './node-records.js';

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

/** Each branch ages from when its executions became runnable, on the clock that decided it. */
const backlogStatement = new PreparedStatement<{ due: number; oldest: number }>(
  'workflows_backlog',
  `select count(*)::int as "due", coalesce(max("age"), 0)::float8 as "oldest" from (
     select extract(epoch from now() - coalesce("lease_until", "started_at")) as "age" from "executions" where "status" = 'running' and ("lease_until" is null or "lease_until" < now())
     union all
     select extract(epoch from ?::timestamptz - "wake_at") from "executions" where "status" = 'waiting' and "wake_at" <= ?::timestamptz
   ) "due"`,
);

/**
 * Which runner holds which execution: claiming the ones nobody holds, renewing and giving back
 * this runner's (`owner`) leases. Lease times come from the database clock, so replicas with skewed
 * clocks agree on expiry (and renewals run in real time); whether a waiting execution is due, and
 * a woken one's deadline, come from `clock`, the runner's, which set its wake time and enforces the
 * deadline.
 */
export class ExecutionLeases {
  private readonly em: EntityManager;
  private readonly owner: string;
  private readonly leaseSeconds: number;
  private readonly executionTimeoutSeconds: number;
  private readonly clock: Clock;

  /** `em` is the ORM's root manager; every operation runs in its own fork. `owner` is this runner's lease id. */
  constructor(em: EntityManager, options: { owner: string; leaseMs: number; executionTimeoutMs: number; clock: Clock }) {
    this.em = em;
    this.owner = options.owner;
    this.leaseSeconds = options.leaseMs / 1_000;
    this.executionTimeoutSeconds = options.executionTimeoutMs / 1_000;
    this.clock = options.clock;
  }

  /**
   * Takes up to `limit` executions nobody holds — running ones never leased or whose lease expired
   * (the runner died), and waiting ones whose time came (decided, timed out, timer due) — and leases
   * them to this runner as running, with what was recorded of their nodes. A woken execution gets a
   * fresh time-out: the time it waited is not time it ran.
   */
  async claim(limit: number): Promise<RunnableExecution[]> {
    const now = new Date(this.clock.now()).toISOString();
    const rows = await this.em.fork().execute<ExecutionRow[]>(
      `with "orphaned" as (
         select "id" from "executions"
         where "status" = 'running' and ("lease_until" is null or "lease_until" < now())
         order by "lease_until" nulls first, "started_at"
         limit ?
         for update skip locked
       ), "due" as (
         select "id" from "executions"
         where "status" = 'waiting' and "wake_at" <= ?::timestamptz
         order by "wake_at"
         limit ?
         for update skip locked
       ), "picked" as (
         select "id" from "orphaned" union all select "id" from "due" limit ?
       )
       update "executions" e set "lease_owner" = ?, "lease_until" = now() + make_interval(secs => ?),
         "deadline_at" = case when e."status" = 'waiting' then ?::timestamptz + make_interval(secs => ?) else e."deadline_at" end,
         "status" = 'running', "wake_at" = null
       from "picked" where e."id" = "picked"."id"
       returning e."id", e."tenant_id", e."workflow_id", e."trigger", e."graph", e."workflow_version", e."input", e."request", e."started_at", e."deadline_at", e."created_by", e."graph_author", e."trace_context"::text as "trace"`,
      [limit, now, limit, limit, this.owner, this.leaseSeconds, now, this.executionTimeoutSeconds],
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

  /** Gives an execution back unfinished (shutdown, or no room to run it here): any runner may claim it at once. */
  async release(executionId: string): Promise<void> {
    await this.em.fork().execute(
      `update "executions" set "lease_owner" = null, "lease_until" = null where "id" = ? and "lease_owner" = ? and "status" = 'running'`,
      [executionId, this.owner],
      'run',
    );
  }

  /**
   * Executions a runner should be running and none holds: running ones never leased or whose lease
   * expired, and waiting ones whose time came (the depth KEDA scales the runners on). The oldest's
   * age counts from its start, its lapsed lease or its wake-up time.
   */
  async backlog(): Promise<BacklogReading> {
    const now = new Date(this.clock.now()).toISOString();
    const [row] = await backlogStatement.rows(this.em.fork(), [now, now]);
    return { due: row?.due ?? 0, oldestSeconds: row?.oldest ?? 0 };
  }
}
