import type { CursorPage } from '@agent-platform/kit';
import type { EntityManager } from '@agent-platform/kit/db';
import { Execution, NodeExecution, type ExecutionStatus } from './executions.entity.js';

export interface ExecutionWithNodes {
  execution: Execution;
  nodes: NodeExecution[];
}

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
   * A running execution becomes cancelled with its nodes in flight, in one statement; whoever runs
   * it notices at its next write or lease renewal. False when it was not running.
   */
  async cancel(tenantId: string, workflowId: string, id: string, now: Date): Promise<boolean> {
    const [row] = await this.em.execute<{ cancelled: number }[]>(
      `with "cancelled" as (
         update "executions" set "status" = 'cancelled', "completed_at" = ?::timestamptz,
           "duration_ms" = greatest(0, floor(extract(epoch from (?::timestamptz - "started_at")) * 1000))::int,
           "error" = null, "lease_owner" = null, "lease_until" = null
         where "id" = ? and "tenant_id" = ? and "workflow_id" = ? and "status" = 'running'
         returning "id"
       ), "nodes" as (
         update "node_executions" set "status" = 'failed', "error" = 'cancelled', "completed_at" = ?::timestamptz
         where "execution_id" in (select "id" from "cancelled") and "status" = 'running'
       )
       select count(*)::int as "cancelled" from "cancelled"`,
      [now.toISOString(), now.toISOString(), id, tenantId, workflowId, now.toISOString()],
    );
    return (row?.cancelled ?? 0) > 0;
  }

  /** The status of an execution, by id only (waiting for one that another runner holds). */
  async statusOf(id: string): Promise<ExecutionStatus | undefined> {
    const [row] = await this.em.fork().execute<{ status: ExecutionStatus }[]>(`select "status" from "executions" where "id" = ?`, [id]);
    return row?.status;
  }
}
