import type { PromiseClient } from '@agent-platform/kit/grpc';
import { ExecutionServiceService, InboundServiceService, WorkflowServiceService } from '@agent-platform/proto/workflows/v1';
import fp from 'fastify-plugin';
import { openBackendChannel, type BackendPluginOptions } from './backend-channel.js';
import { HealthCheck, type HealthClient } from './grpc-health.js';

export interface WorkflowRunnerClients {
  /** Workflows of the principal's tenant. */
  workflows: PromiseClient<typeof WorkflowServiceService>;
  /** Their executions. */
  executions: PromiseClient<typeof ExecutionServiceService>;
  /** Inbound webhook addresses (no principal). */
  inbound: PromiseClient<typeof InboundServiceService>;
  health: HealthClient;
}

/** Typed clients of the workflow-runner service over its own channel. */
export default fp(
  (app, options: BackendPluginOptions, done) => {
    const channel = openBackendChannel(app, options, app.config.WORKFLOW_RUNNER_ADDR);
    app.decorate('workflowRunner', {
      workflows: channel.client(WorkflowServiceService),
      executions: channel.client(ExecutionServiceService),
      inbound: channel.client(InboundServiceService),
      health: channel.client(HealthCheck),
    } satisfies WorkflowRunnerClients);
    done();
  },
  { name: 'workflow-runner', dependencies: ['config'] },
);
