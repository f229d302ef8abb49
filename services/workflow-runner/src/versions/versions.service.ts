import { ACCESS, DomainError, FieldErrors, requireAccess, requireVersionNumber, type Actor, type Page } from '@agent-platform/kit';
import type { EntityManager } from '@agent-platform/kit/db';
import { graphAuthorOf } from '../agents/agent-chat.js';
import { checkAgentReferences, type AgentDirectory } from '../agents/agent-directory.js';
import { checkGraph, sameGraph, type WorkflowGraph } from '../workflows/graph.js';
import { graphColumns } from '../workflows/workflow-input.js';
import type { Workflow } from '../workflows/workflows.entity.js';
import { foundWorkflow, type WorkflowChanges, type WorkflowsRepository } from '../workflows/workflows.repository.js';
import type { WorkflowVersion } from './versions.entity.js';
import type { VersionSummary, WorkflowVersionsRepository } from './versions.repository.js';

export interface WorkflowVersionsServiceOptions {
  em: EntityManager;
  workflows: WorkflowsRepository;
  versions: WorkflowVersionsRepository;
  agents: AgentDirectory;
}

/** A change of a workflow to save: fields, and the graph when one was sent. */
export interface WorkflowSave {
  changes: WorkflowChanges;
  /** A whole, checked graph; undefined keeps the current one. */
  graph?: WorkflowGraph;
  /** A restore: the graph becomes a new version even when it equals the current one. */
  newVersion?: 'always';
}

/**
 * decisions §13: a workflow's graphs as numbered versions. Every save of a graph goes through
 * here, so the references are checked and the version moves the same way for create, update and
 * restore.
 */
export class WorkflowVersionsService {
  private readonly options: WorkflowVersionsServiceOptions;

  constructor(options: WorkflowVersionsServiceOptions) {
    this.options = options;
  }

  /** decisions §13.2: refuses a graph naming agents that are not the actor's tenant's. */
  checkReferences(actor: Actor, graph: WorkflowGraph): Promise<void> {
    return checkAgentReferences(this.options.agents, actor, graph);
  }

  /** Version 1 of a workflow being created, written at the next flush (after the workflow's row). */
  first(workflow: Workflow): WorkflowVersion {
    return this.options.versions.insert({
      workflowId: workflow.id,
      version: 1,
      nodes: workflow.nodes,
      edges: workflow.edges,
      createdAt: workflow.createdAt,
      createdBy: workflow.createdBy,
    });
  }

  /**
   * Applies a change under the workflow's row lock; a graph that differs from the current one (or
   * any graph, for a restore) becomes version n+1 in the same transaction. The lock is what makes
   * concurrent saves take consecutive versions; the references are asked before it is taken, so a
   * slow agent-memory never holds it (nor the executions that wait on it).
   */
  async save(actor: Actor, workflowId: string, save: WorkflowSave, now: Date): Promise<Workflow> {
    if (save.graph) await this.checkReferences(actor, save.graph);
    return this.options.em.transactional(async (em) => {
      const workflow = foundWorkflow(await this.options.workflows.findForUpdate(actor.tenantId, workflowId));
      const changes: WorkflowChanges = { ...save.changes };
      if (save.graph && (save.newVersion === 'always' || !sameGraph(save.graph, workflow))) {
        const version = workflow.version + 1;
        Object.assign(changes, graphColumns(save.graph), { version, graphAuthor: graphAuthorOf(actor) });
        this.options.versions.insert({ workflowId, version, nodes: save.graph.nodes, edges: save.graph.edges, createdAt: now, createdBy: actor.userId });
      }
      this.options.workflows.update(workflow, changes, now);
      await em.flush();
      return workflow;
    });
  }

  async list(actor: Actor, workflowId: string, page: Page): Promise<{ items: VersionSummary[]; total: number }> {
    requireAccess(actor, ACCESS.workflows.read);
    foundWorkflow(await this.options.workflows.find(actor.tenantId, workflowId));
    return this.options.versions.list(workflowId, page.perPage, page.offset);
  }

  async get(actor: Actor, workflowId: string, version: number): Promise<WorkflowVersion> {
    requireAccess(actor, ACCESS.workflows.read);
    return this.find(actor, workflowId, version);
  }

  /**
   * decisions §13.1: a new version equal to `version`, saved as an update of the graph would be.
   * The graph is checked again: the rules, and the tenant's agents, may have changed since.
   */
  async restore(actor: Actor, workflowId: string, version: number, now = new Date()): Promise<Workflow> {
    requireAccess(actor, ACCESS.workflows.write);
    const restored = await this.find(actor, workflowId, version);
    const errors = new FieldErrors();
    const graph = checkGraph(restored.nodes, restored.edges, errors);
    errors.throwIfAny();
    return this.save(actor, workflowId, { changes: {}, graph, newVersion: 'always' }, now);
  }

  private async find(actor: Actor, workflowId: string, version: number): Promise<WorkflowVersion> {
    requireVersionNumber(version);
    foundWorkflow(await this.options.workflows.find(actor.tenantId, workflowId));
    const row = await this.options.versions.find(workflowId, version);
    if (!row) throw DomainError.notFound('Workflow version');
    return row;
  }
}
