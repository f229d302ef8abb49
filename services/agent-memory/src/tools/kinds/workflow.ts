import { ACCESS, DomainError, untilAborted } from '@agent-platform/kit';
import { principalOf } from '@agent-platform/kit/grpc';
import type { Execution } from '@agent-platform/proto/workflows/v1';
import { offeredItself, type ToolCallRequest, type ToolCallServices, type ToolCalls, type ToolKind, type ToolOutcome } from './tool-kind.js';

export interface WorkflowToolConfig {
  workflow_id: string;
}

/** workflow-runner waits at most this long for a synchronous execute (decisions §7), ms. */
export const MAX_WAIT_MS = 30_000;
/**
 * Kept out of the wait for the answer's way back, ms: a run still going when the wait ends is
 * reported as such ("still running … execution <id>") rather than lost to the caller's time-out.
 */
export const ANSWER_MARGIN_MS = 250;

/**
 * `workflow` tools (decisions §12): the tool's workflow runs synchronously with the arguments as
 * its input and trigger `tool`; the result is the execution's output. It runs as the turn's own
 * principal, scopes and all, so workflow-runner holds it to the same rule as
 * `POST /workflows/{id}/execute` (the runner checked TOOL_ACCESS before; this is the service's own
 * check, as every service makes one). A failed or cancelled
 * execution, or one still running when the time is up, is a failed outcome naming the execution,
 * which goes on by itself.
 */
export const workflowTool: ToolKind<WorkflowToolConfig> = {
  label: 'Workflow',
  summary: "runs a workflow of the tenant with the model's arguments as its input (trigger `tool`); its output is the result",
  configHelp: '{workflow_id: a workflow of the tenant}',
  fields: [{ key: 'workflow_id', label: 'Workflow', input: 'workflow' }],
  configKeys: ['workflow_id'],
  schemas: 'own',
  platformAction: { route: 'POST /workflows/:workflow_id/execute', rule: ACCESS.workflows.execute },
  check(config, save) {
    if (typeof config.workflow_id === 'string' && config.workflow_id !== '') return Promise.resolve({ workflow_id: config.workflow_id });
    save.errors.add('config.workflow_id', 'is required: the id of a workflow of this tenant');
    return Promise.resolve({ workflow_id: '' });
  },
  async confirm(config, save) {
    if (!(await save.services.workflows.exists(save.actor, config.workflow_id))) save.errors.add('config.workflow_id', 'is not a workflow of this tenant');
    return null;
  },
  visible: (config) => config,
  offered: (tool) => [offeredItself(tool)],
  calls: workflowCalls,
};

/** The handler of workflow tools' calls, given what they reach. */
export function workflowCalls(services: WorkflowCallServices): ToolCalls {
  return { call: (request) => callWorkflow(request, services) };
}

type WorkflowCallServices = Pick<ToolCallServices, 'executions' | 'timeoutMs'>;

async function callWorkflow(request: ToolCallRequest, services: WorkflowCallServices): Promise<ToolOutcome> {
  const { workflow_id: workflowId } = request.tool.config as WorkflowToolConfig;
  const left = (request.deadlineAt ?? Date.now() + services.timeoutMs) - Date.now();
  const waitMs = Math.min(MAX_WAIT_MS, Math.max(1, left - ANSWER_MARGIN_MS));
  let execution: Execution | undefined;
  try {
    // A unary call cannot be cancelled: its deadline ends it with the wait, and the signal
    // releases the caller at once.
    const answer = await untilAborted(
      services.executions().executeWorkflow(
        { workflowId, inputJson: JSON.stringify(request.arguments), wait: true, waitMs, trigger: 'tool' },
        { principal: principalOf(request.actor), deadlineMs: waitMs + ANSWER_MARGIN_MS, ...(request.requestId ? { requestId: request.requestId } : {}) },
      ),
      request.signal,
    );
    execution = answer.execution;
  } catch (error) {
    const refusal = refusalOf(error, workflowId);
    if (refusal === undefined) throw error;
    return failed(refusal);
  }
  if (!execution) throw new Error('workflow-runner answered without the execution');
  switch (execution.status) {
    case 'completed':
      return { status: 'completed', result: execution.outputJson === undefined || execution.outputJson === '' ? null : (JSON.parse(execution.outputJson) as unknown) };
    case 'running':
      return failed(`still running after ${waitMs} ms; execution ${execution.id}`);
    default: {
      // failed, cancelled, or any end a later runner may add: not a result.
      const cause = execution.error ? `: ${execution.error.nodeId ? `node ${execution.error.nodeId}: ` : ''}${execution.error.message}` : '';
      return failed(`workflow execution ${execution.id} ${execution.status}${cause}`);
    }
  }
}

/** The refusals workflow-runner words for callers, as failed outcomes; undefined for the rest. */
function refusalOf(error: unknown, workflowId: string): string | undefined {
  if (!(error instanceof DomainError)) return undefined;
  switch (error.code) {
    case 'not_found':
      return `workflow ${workflowId} was not found in this tenant`;
    case 'conflict':
      return error.message;
    case 'validation_error':
      return `the workflow refused the input: ${[error.message, ...error.details.map((detail) => `${detail.field} ${detail.message}`)].join('; ')}`;
    default:
      return undefined;
  }
}

function failed(error: string): ToolOutcome {
  return { status: 'failed', error };
}
