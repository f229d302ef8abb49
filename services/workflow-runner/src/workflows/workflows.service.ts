import { ACCESS, DomainError, FieldErrors, newId, requireAccess, type Actor, type Page } from '@agent-platform/kit';
import type { EntityManager } from '@agent-platform/kit/db';
import { graphAuthorOf } from '../agents/agent-chat.js';
import type { WorkflowVersionsService } from '../versions/versions.service.js';
import type { WorkflowGraph } from './graph.js';
import { checkDescription, checkGraphJson, checkName, graphColumns } from './workflow-input.js';
import type { Workflow, WorkflowStatus } from './workflows.entity.js';
import { foundWorkflow, type WorkflowChanges, type WorkflowStatistics, type WorkflowsRepository } from './workflows.repository.js';

export interface CreateWorkflow {
  name: string;
  description: string | undefined;
  nodesJson: string | undefined;
  edgesJson: string | undefined;
}

/** Only the fields present change; nodes and edges are validated together. */
export type UpdateWorkflow = Partial<CreateWorkflow>;

export interface WorkflowView {
  workflow: Workflow;
  lastRunAt: Date | null;
  /** On single reads only. */
  statistics?: WorkflowStatistics;
}

/** decisions §7: which states each lifecycle operation accepts, and where it leads. */
const TRANSITIONS = {
  pause: { from: ['active', 'draft'], to: 'paused' },
  resume: { from: ['draft', 'paused'], to: 'active' },
} as const satisfies Record<string, { from: readonly WorkflowStatus[]; to: WorkflowStatus }>;

export interface WorkflowsServiceOptions {
  em: EntityManager;
  workflows: WorkflowsRepository;
  /** Where graphs become versions and their references are checked (decisions §13). */
  versions: WorkflowVersionsService;
}

/** Workflows of the actor's tenant: validation and lifecycle. */
export class WorkflowsService {
  private readonly options: WorkflowsServiceOptions;

  constructor(options: WorkflowsServiceOptions) {
    this.options = options;
  }

  async create(actor: Actor, request: CreateWorkflow, now = new Date()): Promise<WorkflowView> {
    requireAccess(actor, ACCESS.workflows.write);
    const errors = new FieldErrors();
    const name = checkName(request.name, errors);
    const description = request.description === undefined ? null : checkDescription(request.description, errors);
    const graph = checkGraphJson(request.nodesJson, request.edgesJson, errors);
    errors.throwIfAny();
    await this.options.versions.checkReferences(actor, graph);
    const workflow = await this.options.em.transactional(async (em) => {
      const created = this.options.workflows.insert({
        id: newId('workflow'),
        tenantId: actor.tenantId,
        name,
        description,
        ...graphColumns(graph),
        version: 1,
        createdBy: actor.userId,
        graphAuthor: graphAuthorOf(actor),
        createdAt: now,
      });
      // The workflow's row first: its version references it, and unrelated entities have no set order.
      await em.flush();
      this.options.versions.first(created);
      await em.flush();
      return created;
    });
    return { workflow, lastRunAt: null, statistics: emptyStatistics() };
  }

  list(actor: Actor, page: Page): Promise<{ items: WorkflowView[]; total: number }> {
    requireAccess(actor, ACCESS.workflows.read);
    return this.options.workflows.list(actor.tenantId, page.perPage, page.offset);
  }

  async get(actor: Actor, id: string): Promise<WorkflowView> {
    requireAccess(actor, ACCESS.workflows.read);
    const workflow = foundWorkflow(await this.options.workflows.find(actor.tenantId, id));
    return this.withStatistics(workflow);
  }

  async update(actor: Actor, id: string, request: UpdateWorkflow, now = new Date()): Promise<WorkflowView> {
    requireAccess(actor, ACCESS.workflows.write);
    // not_found before validation: a foreign id must not learn anything from the error.
    const workflow = foundWorkflow(await this.options.workflows.find(actor.tenantId, id));
    const errors = new FieldErrors();
    const changes: WorkflowChanges = {};
    if (request.name !== undefined) changes.name = checkName(request.name, errors);
    if (request.description !== undefined) changes.description = checkDescription(request.description, errors);
    // The half not sent is the one read here: the pair saved is the pair checked, whatever a
    // concurrent update saved meanwhile.
    let graph: WorkflowGraph | undefined;
    if (request.nodesJson !== undefined || request.edgesJson !== undefined) graph = checkGraphJson(request.nodesJson, request.edgesJson, errors, workflow);
    errors.throwIfAny();
    const saved = await this.options.versions.save(actor, id, { changes, ...(graph ? { graph } : {}) }, now);
    return this.withStatistics(saved);
  }

  /** decisions §13.1: the workflow at a new version whose graph is `version`'s. */
  async restore(actor: Actor, id: string, version: number, now = new Date()): Promise<WorkflowView> {
    return this.withStatistics(await this.options.versions.restore(actor, id, version, now));
  }

  async delete(actor: Actor, id: string): Promise<void> {
    requireAccess(actor, ACCESS.workflows.write);
    if (!(await this.options.workflows.delete(actor.tenantId, id))) throw DomainError.notFound('Workflow');
  }

  /** Repeating a move into the state already held is idempotent (decisions §7). */
  async transition(actor: Actor, id: string, operation: keyof typeof TRANSITIONS, now = new Date()): Promise<WorkflowView> {
    requireAccess(actor, ACCESS.workflows.write);
    const { from, to } = TRANSITIONS[operation];
    const workflow = await this.options.em.transactional(async (em) => {
      const locked = foundWorkflow(await this.options.workflows.findForUpdate(actor.tenantId, id));
      if (locked.status !== to) {
        if (!(from as readonly WorkflowStatus[]).includes(locked.status)) {
          throw new DomainError('conflict', `A ${locked.status} workflow cannot be ${operation}d; ${operation} accepts ${from.join(' or ')}.`);
        }
        this.options.workflows.setStatus(locked, to, now);
        await em.flush();
      }
      return locked;
    });
    return this.withStatistics(workflow);
  }

  private async withStatistics(workflow: Workflow): Promise<WorkflowView> {
    const statistics = await this.options.workflows.statistics(workflow.id);
    return { workflow, lastRunAt: statistics.lastRunAt, statistics };
  }
}

function emptyStatistics(): WorkflowStatistics {
  return { totalRuns: 0, completedRuns: 0, finishedRuns: 0, avgDurationMs: 0, lastRunAt: null };
}

