import { GrpcChannel, type PromiseClient } from '@agent-platform/kit/grpc';
import { ExecutionServiceService, InboundServiceService, WorkflowServiceService } from '@agent-platform/proto/workflows/v1';
import fp from 'fastify-plugin';
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

/** Typed clients of the workflow-runner service over its own channel, closed with the app. */
export default fp(
  (app, _options, done) => {
    const channel = new GrpcChannel(app.config.WORKFLOW_RUNNER_ADDR, { defaultDeadlineMs: app.config.GRPC_DEADLINE_MS });
    app.decorate('workflowRunner', {
      workflows: channel.client(WorkflowServiceService),
      executions: channel.client(ExecutionServiceService),
      inbound: channel.client(InboundServiceService),
      health: channel.client(HealthCheck),
    } satisfies WorkflowRunnerClients);
    app.addHook('onClose', (_instance, next) => {
      channel.close();
      next();
    });
    done();
  },
  { name: 'workflow-runner', dependencies: ['config'] },
);
