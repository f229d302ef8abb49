import { encodeCursor, parseCursorPage } from '@agent-platform/kit';
import { actorOf, present, type Handlers } from '@agent-platform/kit/grpc';
import type { Execution as ExecutionMessage, ExecutionServiceService, NodeExecution as NodeMessage } from '@agent-platform/proto/workflows/v1';
import type { Execution, NodeExecution, NodeStatus } from './executions.entity.js';
import type { ExecutionWithNodes } from './executions.repository.js';
import { MAX_WAIT_MS, type ExecutionsService } from './executions.service.js';

export const EXECUTION_SERVICE_NAME = 'agentplatform.workflows.v1.ExecutionService';

/** ExecutionService: translation only; ExecutionsService decides. */
export function executionHandlers(executions: ExecutionsService): Handlers<typeof ExecutionServiceService> {
  return {
    executeWorkflow: async (request, ctx) => {
      const waitMs = request.wait ? request.waitMs || MAX_WAIT_MS : undefined;
      const found = await executions.execute(actorOf(ctx), request.workflowId, present(request.inputJson), waitMs, present(request.trigger));
      return { execution: toMessage(found) };
    },

    getExecution: async (request, ctx) => ({ execution: toMessage(await executions.get(actorOf(ctx), request.workflowId, request.executionId)) }),

    listExecutions: async (request, ctx) => {
      const page = parseCursorPage(request.page);
      const { items, total, hasMore } = await executions.list(actorOf(ctx), request.workflowId, page, present(request.status));
      const last = items.at(-1);
      return {
        items: items.map((execution) => summaryOf(execution)),
        total,
        nextCursor: hasMore && last ? encodeCursor({ createdAt: last.startedAt, id: last.id }) : undefined,
      };
    },

    cancelExecution: async (request, ctx) => ({ execution: toMessage(await executions.cancel(actorOf(ctx), request.workflowId, request.executionId)) }),

    retryExecution: async (request, ctx) => ({ execution: toMessage(await executions.retry(actorOf(ctx), request.workflowId, request.executionId)) }),

    decideApproval: async (request, ctx) => {
      const decided = await executions.decide(actorOf(ctx), request.workflowId, request.executionId, request.nodeId, request.approved, present(request.comment));
      return { execution: toMessage(decided) };
    },
  };
}

function summaryOf(execution: Execution): ExecutionMessage {
  return {
    id: execution.id,
    workflowId: execution.workflowId,
    status: execution.status,
    trigger: execution.trigger,
    inputJson: '',
    error: execution.error ? { nodeId: execution.error.node_id, message: execution.error.message } : undefined,
    nodeExecutions: [],
    startedAt: execution.startedAt,
    completedAt: execution.completedAt ?? undefined,
    durationMs: execution.durationMs ?? undefined,
    workflowVersion: execution.workflowVersion,
  };
}

/** Every node of the graph appears, in graph order; a node with no record yet is `pending`. */
function toMessage({ execution, nodes }: ExecutionWithNodes): ExecutionMessage {
  const records = new Map(nodes.map((node) => [node.nodeId, node]));
  return {
    ...summaryOf(execution),
    inputJson: JSON.stringify(execution.input),
    outputJson: execution.output === null || execution.output === undefined ? undefined : JSON.stringify(execution.output),
    nodeExecutions: execution.graph.nodes.map((node) => nodeMessage(node.id, records.get(node.id))),
  };
}

function nodeMessage(nodeId: string, record: NodeExecution | undefined): NodeMessage {
  const status: NodeStatus = record?.status ?? 'pending';
  return {
    nodeId,
    status,
    startedAt: record?.startedAt ?? undefined,
    completedAt: record?.completedAt ?? undefined,
    durationMs: record?.durationMs ?? undefined,
    outputJson: record?.output === null || record?.output === undefined ? undefined : JSON.stringify(record.output),
    error: record?.error ?? undefined,
    attempts: record?.attempts ?? 0,
  };
}
