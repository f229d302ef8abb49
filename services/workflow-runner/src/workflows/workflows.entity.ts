import { defineEntity, p } from '@mikro-orm/postgresql';
import type { GraphAuthor } from '../agents/agent-chat.js';
import type { TriggerType, WorkflowEdge, WorkflowNode } from './graph.js';

export const WORKFLOW_STATUSES = ['draft', 'active', 'paused'] as const;
export type WorkflowStatus = (typeof WORKFLOW_STATUSES)[number];

export const WorkflowSchema = defineEntity({
  name: 'Workflow',
  tableName: 'workflows',
  properties: {
    id: p.string().primary(),
    tenantId: p.string(),
    name: p.text(),
    description: p.text().strictNullable(),
    status: p.enum(WORKFLOW_STATUSES),
    triggerType: p.enum(['webhook', 'schedule', 'manual'] as const satisfies readonly TriggerType[]),
    nodes: p.json<WorkflowNode[]>().columnType('jsonb'),
    edges: p.json<WorkflowEdge[]>().columnType('jsonb'),
    /** The webhook node's path ('' for none); null without a webhook node. */
    webhookPath: p.text().strictNullable(),
    /** The schedule node's cron and IANA time zone; null without a schedule node. */
    scheduleCron: p.text().strictNullable(),
    scheduleTimezone: p.text().strictNullable(),
    /** The version of the current graph (decisions §13.1); its copy is in workflow_versions. */
    version: p.integer(),
    /** Who created it. */
    createdBy: p.string(),
    /** Who saved the current graph: its agent nodes chat as this principal (null: saved before it was kept; the creator). */
    graphAuthor: p.json<GraphAuthor>().columnType('jsonb').strictNullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});

export class Workflow extends WorkflowSchema.class {}
WorkflowSchema.setClass(Workflow);
