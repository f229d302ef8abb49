import { DomainError, type Actor } from '@agent-platform/kit';
import { platformPrincipal, type PromiseClient } from '@agent-platform/kit/grpc';
import type { WorkflowServiceService } from '@agent-platform/proto/workflows/v1';

/** Whether a workflow of the actor's tenant has this id (decisions §12: checked at save). */
export interface WorkflowDirectory {
  exists(actor: Actor, workflowId: string): Promise<boolean>;
}

/**
 * Asks workflow-runner. The question is the platform's, not the caller's: it is asked as a
 * viewer of the actor's tenant, so a key with tools:write needs no workflows:read to name a
 * workflow, and the tenant still bounds what can be found.
 */
export class GrpcWorkflowDirectory implements WorkflowDirectory {
  private readonly client: () => PromiseClient<typeof WorkflowServiceService>;

  /** `client` is called at the first question: workflow-runner may start after this service. */
  constructor(client: () => PromiseClient<typeof WorkflowServiceService>) {
    this.client = client;
  }

  async exists(actor: Actor, workflowId: string): Promise<boolean> {
    try {
      await this.client().getWorkflow({ workflowId }, { principal: platformPrincipal(actor, 'viewer') });
      return true;
    } catch (error) {
      if (error instanceof DomainError && error.code === 'not_found') return false;
      throw error;
    }
  }
}
