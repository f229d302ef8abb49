import { DomainError } from '@agent-platform/kit';
import type { EntityManager } from '@agent-platform/kit/db';
import { LockMode } from '@mikro-orm/postgresql';
import { Workflow, type WorkflowStatus } from './workflows.entity.js';

export type NewWorkflow = Omit<Workflow, 'status' | 'updatedAt'>;

/** The workflow a lookup found, or not_found: another tenant's is not found either. */
export function foundWorkflow(workflow: Workflow | null): Workflow {
  if (!workflow) throw DomainError.notFound('Workflow');
  return workflow;
}

export type WorkflowChanges = Partial<
  Pick<Workflow, 'name' | 'description' | 'status' | 'triggerType' | 'nodes' | 'edges' | 'webhookPath' | 'scheduleCron' | 'scheduleTimezone' | 'version' | 'graphAuthor'>
>;

/** The run history of a workflow, computed from its executions. */
export interface WorkflowStatistics {
  totalRuns: number;
  completedRuns: number;
  finishedRuns: number;
  /** Mean duration of finished runs, ms; 0 when none. */
  avgDurationMs: number;
  lastRunAt: Date | null;
}

interface StatisticsRow {
  total: number;
  completed: number;
  finished: number;
  avg_ms: number;
  last_run_at: Date | null;
}

/** Every read and write takes the tenant id: another tenant's workflow is simply not there. */
export class WorkflowsRepository {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  insert(workflow: NewWorkflow): Workflow {
    return this.em.create(Workflow, { ...workflow, status: 'draft', updatedAt: workflow.createdAt });
  }

  find(tenantId: string, id: string): Promise<Workflow | null> {
    return this.em.findOne(Workflow, { id, tenantId });
  }

  /**
   * Locks the row until the transaction ends: status changes, versions and executions see one
   * state. Read afresh even when this request loaded it before: what the lock protects is now.
   */
  findForUpdate(tenantId: string, id: string): Promise<Workflow | null> {
    return this.em.findOne(Workflow, { id, tenantId }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
  }

  /** Newest first, each with the start of its latest execution. */
  async list(tenantId: string, limit: number, offset: number): Promise<{ items: { workflow: Workflow; lastRunAt: Date | null }[]; total: number }> {
    const [workflows, total] = await this.em.findAndCount(Workflow, { tenantId }, { orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], limit, offset });
    const ids = workflows.map((workflow) => workflow.id);
    const lastRuns = new Map<string, Date>();
    if (ids.length > 0) {
      // One probe of the (workflow_id, started_at desc) index per workflow.
      const rows = await this.em.execute<{ workflow_id: string; last_run_at: Date }[]>(
        `select w."id" as "workflow_id", "last"."started_at" as "last_run_at" from "workflows" w
         cross join lateral (select e."started_at" from "executions" e where e."workflow_id" = w."id" order by e."started_at" desc limit 1) "last"
         where w."id" in (?)`,
        [ids],
      );
      for (const row of rows) lastRuns.set(row.workflow_id, new Date(row.last_run_at));
    }
    return { items: workflows.map((workflow) => ({ workflow, lastRunAt: lastRuns.get(workflow.id) ?? null })), total };
  }

  async statistics(workflowId: string): Promise<WorkflowStatistics> {
    const [row] = await this.em.execute<StatisticsRow[]>(
      `select count(*)::int as "total",
         count(*) filter (where "status" = 'completed')::int as "completed",
         count(*) filter (where "status" not in ('running', 'waiting'))::int as "finished",
         coalesce(avg("duration_ms") filter (where "status" not in ('running', 'waiting')), 0)::float8 as "avg_ms",
         max("started_at") as "last_run_at"
       from "executions" where "workflow_id" = ?`,
      [workflowId],
    );
    return {
      totalRuns: row?.total ?? 0,
      completedRuns: row?.completed ?? 0,
      finishedRuns: row?.finished ?? 0,
      avgDurationMs: row?.avg_ms ?? 0,
      lastRunAt: row?.last_run_at ? new Date(row.last_run_at) : null,
    };
  }

  update(workflow: Workflow, changes: WorkflowChanges, now: Date): void {
    this.em.assign(workflow, { ...changes, updatedAt: now });
  }

  setStatus(workflow: Workflow, status: WorkflowStatus, now: Date): void {
    if (workflow.status !== status) this.em.assign(workflow, { status, updatedAt: now });
  }

  /** Versions, executions, node results and schedule ticks go with it (ON DELETE CASCADE). */
  async delete(tenantId: string, id: string): Promise<boolean> {
    return (await this.em.nativeDelete(Workflow, { id, tenantId })) > 0;
  }
}
