import type { Execution, NodeExecution, Workflow, WorkflowVersion } from '@agent-platform/proto/workflows/v1';
import { z } from 'zod';
import { WORKFLOW_NODE_KINDS, WORKFLOW_NODE_TYPES } from '../../../../generated/kinds.js';
import { iso, pathId, isoOrNull, pageOf, queryInt, TenantQuery, Timestamp, VersionNumber } from '../../../../http/schemas.js';

// The gateway checks shapes. What a graph may be (node types, config keys per type, edges, cycles,
// CEL rules, 200 nodes) is the workflow-runner's to decide; its validation_error names each field
// (`nodes[2].config.path`).

const NodeInput = z
  .record(z.string(), z.unknown())
  .describe(
    [
      '{id, type, config}. id: 1..100 of A-Z a-z 0-9 _ -, unique. type and config:',
      WORKFLOW_NODE_KINDS.map((kind) => `${kind.type} ${kind.config}`).join('; ') + '.',
      'Any node may add retry {max_attempts?: 1..10, default 1, backoff_seconds?: 0..300, default 1, doubling up to 300} and on_error: fail (default) | continue.',
      'Templates are strings with {{ CEL }} placeholders over input, nodes.<id>.output and request.',
    ].join(' '),
  );

/** The node types (services/workflow-runner/src/nodes); a component, so clients read the catalogue from the document. */
const WorkflowNodeType = z
  .enum(WORKFLOW_NODE_TYPES)
  .describe(WORKFLOW_NODE_KINDS.map((kind) => `${kind.type}: ${kind.summary}`).join('; '))
  .meta({ id: 'WorkflowNodeType' });

const EdgeInput = z.record(z.string(), z.unknown()).describe('{source, target}: node ids.');

export const WorkflowParams = z.object({ workflow_id: pathId('workflow', 'wf') });
export const ExecutionParams = WorkflowParams.extend({ execution_id: pathId('execution', 'exe') });
export const ExecutionNodeParams = ExecutionParams.extend({ node_id: z.string().min(1).describe("The node's id in the execution's graph.") });
export const VersionParams = WorkflowParams.extend({ version: VersionNumber });

const WORKFLOW_EXAMPLE = {
  name: 'Triage support tickets',
  description: 'Asks the support agent, escalates urgent answers to Slack',
  nodes: [
    { id: 'start', type: 'webhook', config: { path: '/tickets' } },
    { id: 'ask', type: 'agent', config: { agent_id: 'agt_01JD0F3G4H5J6K7M8N9P0QRSTV', message: 'Triage: {{ input.text }}' } },
    { id: 'route', type: 'condition', config: { rules: [{ if: 'nodes.ask.output.content.contains("urgent")', goto: 'notify' }, { else: 'done' }] } },
    { id: 'notify', type: 'integration', config: { service: 'slack', webhook_url: 'https://hooks.slack.com/services/T000/B000/XXXX', text: '{{ nodes.ask.output.content }}' } },
    { id: 'done', type: 'integration', config: { service: 'http', url: 'https://tickets.acme.test/close', method: 'POST' } },
  ],
  edges: [
    { source: 'start', target: 'ask' },
    { source: 'ask', target: 'route' },
    { source: 'route', target: 'notify' },
    { source: 'route', target: 'done' },
  ],
};

export const CreateWorkflowBody = z
  .object({
    name: z.string().describe('1..200 characters, not blank.'),
    description: z.string().optional().describe('Up to 2,000 characters.'),
    nodes: z.array(NodeInput).optional().describe('At most 200 nodes; at most one trigger node (webhook or schedule). Default [].'),
    edges: z.array(EdgeInput).optional().describe('No cycles. Default [].'),
  })
  .meta({ examples: [WORKFLOW_EXAMPLE] });

export const UpdateWorkflowBody = CreateWorkflowBody.partial()
  .describe('Only the fields sent change; the status is kept. nodes and edges are validated together.')
  .meta({ examples: [{ description: 'Asks the support agent; escalates urgent answers' }] });

export const ExecuteBody = z
  .object({
    input: z.record(z.string(), z.unknown()).optional().describe('The trigger payload, free-form; expressions see it as `input`. Default {}.'),
    async: z.boolean().optional().describe('true (default): 202 at once. false: waits up to 30 s and answers 200 with the execution.'),
  })
  .optional()
  .meta({ examples: [{ input: { text: 'My order arrived broken, this is urgent' }, async: true }] });

/** decisions §7.5; a component of its own, so clients (the console) read the catalogue from the document. */
export const EXECUTION_STATUSES = ['running', 'waiting', 'completed', 'failed', 'cancelled'] as const;
export const ExecutionStatus = z
  .enum(EXECUTION_STATUSES)
  .describe('running | waiting (parked on an approval or wait node) | completed | failed | cancelled')
  .meta({ id: 'ExecutionStatus' });

export const ExecutionsQuery = TenantQuery.extend({
  limit: queryInt({ min: 1, max: 100, fallback: 20, description: 'Executions per page, 1..100.' }),
  cursor: z.string().min(1).optional().describe('next_cursor of the previous page.'),
  status: z.enum(EXECUTION_STATUSES).optional().describe('Only executions in this status.'),
});

const Statistics = z
  .object({
    total_runs: z.int(),
    success_rate: z.number().describe('completed ÷ finished (completed, failed, cancelled); 0 when none has finished.'),
    avg_duration: z.string().describe('Mean duration of finished runs in seconds with two decimals and `s`, e.g. "1.25s".'),
  })
  .meta({ id: 'WorkflowStatistics' });

const RetryPolicy = z
  .object({ max_attempts: z.int().describe('1..10 runs in all.'), backoff_seconds: z.number().describe('Before the second run; doubled before each later one, up to 300.') })
  .meta({ id: 'RetryPolicy' });

const Node = z
  .object({
    id: z.string(),
    type: WorkflowNodeType,
    config: z.record(z.string(), z.unknown()),
    retry: RetryPolicy.optional(),
    on_error: z.enum(['fail', 'continue']).optional().describe('continue: a failure is recorded on the node (output {error}) and its successors run.'),
  })
  .meta({ id: 'WorkflowNode' });
const Edge = z.object({ source: z.string(), target: z.string() }).meta({ id: 'WorkflowEdge' });

export const WorkflowSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    status: z.string().describe('draft | active | paused'),
    trigger_type: z.string().describe('webhook | schedule | manual, from the trigger node.'),
    nodes: z.array(Node),
    edges: z.array(Edge),
    webhook_url: z.string().describe('{WEBHOOK_HOST}/{workflow_id}{path of the webhook node}'),
    last_run_at: Timestamp.nullable(),
    statistics: Statistics,
    version: z.int().describe('The version of the current graph: 1 at creation, the next with every change of nodes or edges and every restore.'),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'Workflow', description: 'A graph of nodes run on demand, by an inbound webhook or on a schedule.' });

export const WorkflowSummary = WorkflowSchema.omit({ nodes: true, edges: true, statistics: true }).meta({ id: 'WorkflowSummary' });
export const WorkflowPage = pageOf(WorkflowSummary);

export const WorkflowVersionSummary = z
  .object({
    version: z.int(),
    created_at: Timestamp,
    created_by: z.string().describe('The user whose create, update or restore made this version.'),
  })
  .meta({ id: 'WorkflowVersionSummary' });

export const WorkflowVersionSchema = WorkflowVersionSummary.extend({ nodes: z.array(Node), edges: z.array(Edge) }).meta({
  id: 'WorkflowVersion',
  description: 'One graph the workflow has had; versions never change once made.',
});

export const WorkflowVersionPage = pageOf(WorkflowVersionSummary);

const ExecutionError = z.object({ node_id: z.string().nullable(), message: z.string() }).meta({ id: 'ExecutionError' });

const NodeExecutionSchema = z
  .object({
    node_id: z.string(),
    status: z.string().describe('pending | running | waiting | completed | failed | skipped'),
    started_at: Timestamp.nullable(),
    completed_at: Timestamp.nullable(),
    duration_ms: z.int().nullable(),
    output: z
      .unknown()
      .optional()
      .describe('Completed: its result; failed under on_error continue: {error}; waiting: an approval\'s {message, expires_at}, a wait\'s {until}.'),
    error: z.string().nullable(),
    attempts: z.int().describe('Runs so far: 0 before it ran or when skipped, more than 1 after retries.'),
  })
  .meta({ id: 'NodeExecution' });

export const ExecutionSummary = z
  .object({
    id: z.string(),
    execution_id: z.string().describe('The same as id (the contract names it so).'),
    workflow_id: z.string(),
    status: ExecutionStatus,
    trigger: z.string().describe('manual | webhook | schedule | retry | tool (an agent ran the workflow as a tool during a chat turn)'),
    error: ExecutionError.nullable(),
    started_at: Timestamp,
    completed_at: Timestamp.nullable(),
    duration_ms: z.int().nullable(),
    workflow_version: z.int().describe('The version of the workflow the execution runs, from start to end, whatever is saved meanwhile.'),
  })
  .meta({ id: 'ExecutionSummary' });

export const ExecutionSchema = ExecutionSummary.extend({
  input: z.unknown(),
  output: z.unknown().describe('The output of the last node, or of each last node by id when the run ended in several.'),
  node_executions: z.array(NodeExecutionSchema).describe('Every node of the graph, in graph order.'),
}).meta({ id: 'WorkflowExecution' });

export const ExecutionAccepted = z
  .object({ execution_id: z.string(), workflow_id: z.string(), status: z.string(), started_at: Timestamp })
  .meta({ id: 'ExecutionAccepted' });

export const ExecutionPage = z.object({ items: z.array(ExecutionSummary), total: z.int(), next_cursor: z.string().nullable() });

/** decisions §7: seconds with two decimals and `s`. */
export function formatDuration(ms: number): string {
  return `${(ms / 1_000).toFixed(2)}s`;
}

function parsed(json: string | undefined): unknown {
  return json === undefined || json === '' ? null : (JSON.parse(json) as unknown);
}

/** The REST workflow of a gRPC answer; its absence is an upstream defect (500). */
export function workflowBody(workflow: Workflow | undefined, webhookHost: string): z.output<typeof WorkflowSchema> {
  if (!workflow) throw new Error('workflow-runner answered without the workflow.');
  const statistics = workflow.statistics ?? { totalRuns: 0, successRate: 0, avgDurationMs: 0 };
  return {
    ...workflowSummaryBody(workflow, webhookHost),
    nodes: JSON.parse(workflow.nodesJson) as z.output<typeof Node>[],
    edges: JSON.parse(workflow.edgesJson) as z.output<typeof Edge>[],
    statistics: { total_runs: statistics.totalRuns, success_rate: statistics.successRate, avg_duration: formatDuration(statistics.avgDurationMs) },
  };
}

export function workflowSummaryBody(workflow: Workflow, webhookHost: string): z.output<typeof WorkflowSummary> {
  return {
    id: workflow.id,
    name: workflow.name,
    description: workflow.description ?? null,
    status: workflow.status,
    trigger_type: workflow.triggerType,
    webhook_url: `${webhookHost.replace(/\/+$/, '')}/${workflow.webhookPath}`,
    last_run_at: isoOrNull(workflow.lastRunAt),
    version: workflow.version,
    created_at: iso(workflow.createdAt),
    updated_at: iso(workflow.updatedAt),
  };
}

export function executionSummaryBody(execution: Execution): z.output<typeof ExecutionSummary> {
  return {
    id: execution.id,
    execution_id: execution.id,
    workflow_id: execution.workflowId,
    // Another value would be workflow-runner's defect: a 500, not an answer outside the catalogue.
    status: ExecutionStatus.parse(execution.status),
    trigger: execution.trigger,
    error: execution.error ? { node_id: execution.error.nodeId || null, message: execution.error.message } : null,
    started_at: iso(execution.startedAt),
    completed_at: isoOrNull(execution.completedAt),
    duration_ms: execution.durationMs ?? null,
    workflow_version: execution.workflowVersion,
  };
}

export function versionSummaryBody(version: WorkflowVersion): z.output<typeof WorkflowVersionSummary> {
  return { version: version.version, created_at: iso(version.createdAt), created_by: version.createdBy };
}

/** A version with its graph; its absence, or its graph's, is an upstream defect (500). */
export function versionBody(version: WorkflowVersion | undefined): z.output<typeof WorkflowVersionSchema> {
  if (!version?.nodesJson || !version.edgesJson) throw new Error('workflow-runner answered without the version and its graph.');
  return {
    ...versionSummaryBody(version),
    nodes: JSON.parse(version.nodesJson) as z.output<typeof Node>[],
    edges: JSON.parse(version.edgesJson) as z.output<typeof Edge>[],
  };
}

function nodeExecutionBody(node: NodeExecution): z.output<typeof NodeExecutionSchema> {
  return {
    node_id: node.nodeId,
    status: node.status,
    started_at: isoOrNull(node.startedAt),
    completed_at: isoOrNull(node.completedAt),
    duration_ms: node.durationMs ?? null,
    ...(node.outputJson === undefined ? {} : { output: parsed(node.outputJson) }),
    error: node.error ?? null,
    attempts: node.attempts,
  };
}

export function executionBody(execution: Execution | undefined): z.output<typeof ExecutionSchema> {
  if (!execution) throw new Error('workflow-runner answered without the execution.');
  return {
    ...executionSummaryBody(execution),
    input: parsed(execution.inputJson) ?? {},
    output: parsed(execution.outputJson),
    node_executions: execution.nodeExecutions.map(nodeExecutionBody),
  };
}

export function acceptedBody(execution: Execution | undefined): z.output<typeof ExecutionAccepted> {
  if (!execution) throw new Error('workflow-runner answered without the execution.');
  return { execution_id: execution.id, workflow_id: execution.workflowId, status: execution.status, started_at: iso(execution.startedAt) };
}

export function graphJson(value: readonly unknown[] | undefined): string | undefined {
  return value === undefined ? undefined : JSON.stringify(value);
}
