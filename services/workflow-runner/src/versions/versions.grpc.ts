import { parsePage } from '@agent-platform/kit';
import { actorOf, type Handlers } from '@agent-platform/kit/grpc';
import type { WorkflowServiceService, WorkflowVersion as VersionMessage } from '@agent-platform/proto/workflows/v1';
import type { WorkflowVersion } from './versions.entity.js';
import type { VersionSummary } from './versions.repository.js';
import type { WorkflowVersionsService } from './versions.service.js';

type VersionHandlers = Pick<Handlers<typeof WorkflowServiceService>, 'listWorkflowVersions' | 'getWorkflowVersion'>;

/** WorkflowService's version reads: translation only; WorkflowVersionsService decides. */
export function versionHandlers(versions: WorkflowVersionsService): VersionHandlers {
  return {
    listWorkflowVersions: async (request, ctx) => {
      const { items, total } = await versions.list(actorOf(ctx), request.workflowId, parsePage(request.page));
      return { items: items.map(summaryOf), total };
    },

    getWorkflowVersion: async (request, ctx) => {
      const version = await versions.get(actorOf(ctx), request.workflowId, request.version);
      return { version: { ...summaryOf(version), nodesJson: JSON.stringify(version.nodes), edgesJson: JSON.stringify(version.edges) } };
    },
  };
}

function summaryOf(version: VersionSummary | WorkflowVersion): VersionMessage {
  return { version: version.version, createdAt: version.createdAt, createdBy: version.createdBy };
}
