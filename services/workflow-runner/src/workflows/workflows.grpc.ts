import { parsePage } from '@agent-platform/kit';
import { actorOf, present, type Handlers } from '@agent-platform/kit/grpc';
import type { Workflow as WorkflowMessage, WorkflowServiceService } from '@agent-platform/proto/workflows/v1';
import { versionHandlers } from '../versions/versions.grpc.js';
import type { WorkflowVersionsService } from '../versions/versions.service.js';
import type { WorkflowsService, WorkflowView } from './workflows.service.js';

export const WORKFLOW_SERVICE_NAME = 'agentplatform.workflows.v1.WorkflowService';

/** WorkflowService: translation only; WorkflowsService and WorkflowVersionsService decide. */
export function workflowHandlers(workflows: WorkflowsService, versions: WorkflowVersionsService): Handlers<typeof WorkflowServiceService> {
  return {
    ...versionHandlers(versions),

    createWorkflow: async (request, ctx) => {
      const view = await workflows.create(actorOf(ctx), {
        name: request.name,
        description: present(request.description),
        nodesJson: present(request.nodesJson),
        edgesJson: present(request.edgesJson),
      });
      return { workflow: toMessage(view) };
    },

    listWorkflows: async (request, ctx) => {
      const { items, total } = await workflows.list(actorOf(ctx), parsePage(request.page));
      return { items: items.map(toMessage), total };
    },

    getWorkflow: async (request, ctx) => ({ workflow: toMessage(await workflows.get(actorOf(ctx), request.workflowId)) }),

    updateWorkflow: async (request, ctx) => {
      const view = await workflows.update(actorOf(ctx), request.workflowId, {
        name: present(request.name),
        description: request.description,
        nodesJson: present(request.nodesJson),
        edgesJson: present(request.edgesJson),
      });
      return { workflow: toMessage(view) };
    },

    deleteWorkflow: async (request, ctx) => {
      await workflows.delete(actorOf(ctx), request.workflowId);
      return {};
    },

    pauseWorkflow: async (request, ctx) => ({ workflow: toMessage(await workflows.transition(actorOf(ctx), request.workflowId, 'pause')) }),

    resumeWorkflow: async (request, ctx) => ({ workflow: toMessage(await workflows.transition(actorOf(ctx), request.workflowId, 'resume')) }),

    restoreWorkflowVersion: async (request, ctx) => ({ workflow: toMessage(await workflows.restore(actorOf(ctx), request.workflowId, request.version)) }),
  };
}

function toMessage({ workflow, lastRunAt, statistics }: WorkflowView): WorkflowMessage {
  return {
    id: workflow.id,
    name: workflow.name,
    description: workflow.description ?? undefined,
    status: workflow.status,
    triggerType: workflow.triggerType,
    nodesJson: JSON.stringify(workflow.nodes),
    edgesJson: JSON.stringify(workflow.edges),
    // decisions §7: the inbound address, with the webhook node's path when it has one.
    webhookPath: `${workflow.id}${workflow.webhookPath ?? ''}`,
    lastRunAt: lastRunAt ?? undefined,
    statistics: statistics
      ? {
          totalRuns: statistics.totalRuns,
          successRate: statistics.finishedRuns === 0 ? 0 : statistics.completedRuns / statistics.finishedRuns,
          avgDurationMs: statistics.avgDurationMs,
        }
      : undefined,
    createdAt: workflow.createdAt,
    updatedAt: workflow.updatedAt,
    version: workflow.version,
  };
}
