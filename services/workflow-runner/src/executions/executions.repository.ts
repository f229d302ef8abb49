import type { CursorPage } from '@agent-platform/kit';
import type { EntityManager } from '@agent-platform/kit/db';
import type { WorkflowGraph } from '../workflows/graph.js';
import { Execution, NodeExecution, UNFINISHED_STATUSES, type ExecutionStatus, type StoredNodeStatus } from './executions.entity.js';

export interface ExecutionWithNodes {
  execution: Execution;
  nodes: NodeExecution[];
}

/** What became of a decision on an approval node; only `decided` changed anything. */
export type DecisionOutcome =
  | { kind: 'decided' }
  | { kind: 'no_execution' }
  | { kind: 'no_node' }
  | { kind: 'not_approval'; type: string }
  | { kind: 'finished'; status: ExecutionStatus }
  | { kind: 'not_waiting'; status: StoredNodeStatus | 'pending' };

/** Reads of executions for the API, and the cancel; the run itself writes through ExecutionStore. */
export class ExecutionsRepository {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  async find(tenantId: string, workflowId: string, id: string): Promise<ExecutionWithNodes | null> {
    const execution = await this.em.findOne(Execution, { id, tenantId, workflowId }, { populate: ['graph'] });
    if (!execution) return null;
    const nodes = await this.em.find(NodeExecution, { executionId: id });
    return { execution, nodes };
  }

  /** Newest first; `total` counts every execution matching the filter; `hasMore` when a further page has any. */
  async list(tenantId: string, workflowId: string, page: CursorPage, status: ExecutionStatus | undefined): Promise<{ items: Execution[]; total: number; hasMore: boolean }> {
    const filter = { tenantId, workflowId, ...(status ? { status } : {}) };
    const after = page.after ? { $or: [{ startedAt: { $lt: page.after.createdAt } }, { startedAt: page.after.createdAt, id: { $lt: page.after.id } }] } : {};
    const [items, total] = await Promise.all([
      // One more than the page: whether it exists decides next_cursor, so a full last page ends the list.
      this.em.find(Execution, { ...filter, ...after }, { orderBy: [{ startedAt: 'desc' }, { id: 'desc' }], limit: page.limit + 1 }),
      this.em.count(Execution, filter),
    ]);
    return { items: items.slice(0, page.limit), total, hasMore: items.length > page.limit };
  }

  /**
   * A running or waiting execution becomes cancelled with its nodes in flight or waiting, in one
   * statement; whoever runs it notices at its next write or lease renewal. False when it had finished.
   */
  async cancel(tenantId: string, workflowId: string, id: string, now: Date): Promise<boolean> {
    const [row] = await this.em.execute<{ cancelled: number }[]>(
      `with "cancelled" as (
         update "executions" set "status" = 'cancelled', "completed_at" = ?::timestamptz,
           "duration_ms" = greatest(0, floor(extract(epoch from (?::timestamptz - "started_at")) * 1000))::int,
           "error" = null, "lease_owner" = null, "lease_until" = null, "wake_at" = null
         where "id" = ? and "tenant_id" = ? and "workflow_id" = ? and "status" in ('running', 'waiting')
         returning "id"
       ), "nodes" as (
         update "node_executions" set "status" = 'failed', "error" = 'cancelled', "completed_at" = ?::timestamptz, "wake_at" = null
         where "execution_id" in (select "id" from "cancelled") and "status" in ('running', 'waiting')
       )
       select count(*)::int as "cancelled" from "cancelled"`,
      [now.toISOString(), now.toISOString(), id, tenantId, workflowId, now.toISOString()],
    );
    return (row?.cancelled ?? 0) > 0;
  }

  /**
   * decisions §13: completes a waiting approval node with `output` and wakes its execution (due at
   * `now`, the runner's clock's, which claims compare with), in one statement that locks the
   * execution's row first. The node changes only while `waiting`, so of two decisions, or a decision
   * and the time-out, exactly one lands. The execution's `wake_at` is set even while a runner holds
   * it: the runner's park keeps it (WaitingExecutions.park), so a decision that lands mid-run wakes
   * the execution as soon as it parks (decisions §13.4).
   */
  async decide(tenantId: string, workflowId: string, id: string, nodeId: string, output: unknown, now: Date): Promise<DecisionOutcome> {
    const [row] = await this.em.fork().execute<{ status: ExecutionStatus; graph: WorkflowGraph; decided: boolean; node_status: StoredNodeStatus | null }[]>(
      `with "execution" as (
         select "id", "status", "graph" from "executions" where "id" = ? and "tenant_id" = ? and "workflow_id" = ? for update
       ), "decided" as (
         update "node_executions" n set "status" = 'completed', "output" = ?::jsonb, "completed_at" = ?::timestamptz, "wake_at" = null,
           "duration_ms" = greatest(0, floor(extract(epoch from (?::timestamptz - n."started_at")) * 1000))::int
         from "execution" e
         where n."execution_id" = e."id" and n."node_id" = ? and n."status" = 'waiting' and e."status" in ('running', 'waiting')
           and e."graph"->'nodes' @> jsonb_build_array(jsonb_build_object('id', ?::text, 'type', 'approval'))
         returning n."node_id"
       ), "woken" as (
         update "executions" x set "wake_at" = ?::timestamptz from "decided" where x."id" = ?
       )
       select e."status", e."graph", exists (select 1 from "decided") as "decided",
         (select "status" from "node_executions" where "execution_id" = e."id" and "node_id" = ?) as "node_status"
       from "execution" e`,
      [id, tenantId, workflowId, JSON.stringify(output), now.toISOString(), now.toISOString(), nodeId, nodeId, now.toISOString(), id, nodeId],
    );
    if (!row) return { kind: 'no_execution' };
    if (row.decided) return { kind: 'decided' };
    const node = row.graph.nodes.find((candidate) => candidate.id === nodeId);
    if (!node) return { kind: 'no_node' };
    if (node.type !== 'approval') return { kind: 'not_approval', type: node.type };
    if (!(UNFINISHED_STATUSES as readonly string[]).includes(row.status)) return { kind: 'finished', status: row.status };
    return { kind: 'not_waiting', status: row.node_status ?? 'pending' };
  }

  /** The status of an execution, by id only (waiting for one that another runner holds). */
  async statusOf(id: string): Promise<ExecutionStatus | undefined> {
    const [row] = await this.em.fork().execute<{ status: ExecutionStatus }[]>(`select "status" from "executions" where "id" = ?`, [id]);
    return row?.status;
  }
}
