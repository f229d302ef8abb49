import { defineEntity, p } from '@mikro-orm/postgresql';
import type { WorkflowEdge, WorkflowNode } from '../workflows/graph.js';

/**
 * One graph a workflow has had (decisions §13.1): creation is version 1, every change of nodes or
 * edges and every restore the next. Never changed once written; it goes with its workflow.
 */
export const WorkflowVersionSchema = defineEntity({
  name: 'WorkflowVersion',
  tableName: 'workflow_versions',
  properties: {
    workflowId: p.string().primary(),
    version: p.integer().primary(),
    nodes: p.json<WorkflowNode[]>().columnType('jsonb'),
    edges: p.json<WorkflowEdge[]>().columnType('jsonb'),
    createdAt: p.datetime(),
    /** The user whose create, update or restore made it. */
    createdBy: p.string(),
  },
});

export class WorkflowVersion extends WorkflowVersionSchema.class {}
WorkflowVersionSchema.setClass(WorkflowVersion);
