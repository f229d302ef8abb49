import type { EntityManager } from '@agent-platform/kit/db';
import { WorkflowVersion } from './versions.entity.js';

/** A version as lists show it: without its graph. */
export type VersionSummary = Pick<WorkflowVersion, 'version' | 'createdAt' | 'createdBy'>;

/**
 * Versions by workflow id. The caller has found the workflow in the actor's tenant first: that is
 * what keeps another tenant's versions out of reach.
 */
export class WorkflowVersionsRepository {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  /** Written at the next flush, in the transaction that moves the workflow to this version. */
  insert(version: WorkflowVersion): WorkflowVersion {
    return this.em.create(WorkflowVersion, version);
  }

  find(workflowId: string, version: number): Promise<WorkflowVersion | null> {
    return this.em.findOne(WorkflowVersion, { workflowId, version });
  }

  /** Newest first. */
  async list(workflowId: string, limit: number, offset: number): Promise<{ items: VersionSummary[]; total: number }> {
    const [items, total] = await this.em.findAndCount(
      WorkflowVersion,
      { workflowId },
      { fields: ['version', 'createdAt', 'createdBy'], orderBy: { version: 'desc' }, limit, offset },
    );
    return { items, total };
  }
}
