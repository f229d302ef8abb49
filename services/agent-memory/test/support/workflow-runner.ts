import { InProcessEventBus } from '@agent-platform/kit/events';
import { GrpcChannel, type PromiseClient } from '@agent-platform/kit/grpc';
import { databaseFixture } from '@agent-platform/kit/testing';
import { ExecutionServiceService, WorkflowServiceService } from '@agent-platform/proto/workflows/v1';
import { buildWorkflowRunnerService, loadWorkflowRunnerConfig, migrations, openDatabase } from '@agent-platform/workflow-runner';
import { logger, type TestTenant } from './harness.js';

/** The real workflow-runner on 127.0.0.1:0 over its own database: what a workflow tool names. */
export interface WorkflowRunnerPeer {
  address: string;
  workflows: PromiseClient<typeof WorkflowServiceService>;
  executions: PromiseClient<typeof ExecutionServiceService>;
  /** A new workflow of the tenant (by default one http GET node); its id. */
  createWorkflow(tenant: TestTenant, nodes?: unknown[]): Promise<string>;
  stop(): Promise<void>;
}

/** A file-scoped database of workflow-runner's, cloned from its migrated template. */
export const workflowsDatabase = databaseFixture({
  name: 'workflows',
  migrations,
  migrate: async (url) => {
    const orm = await openDatabase(url, logger);
    await orm.close();
  },
});

/** `env` adds to the runner's environment (ALLOW_PRIVATE_NETWORK_URLS, to reach a local receiver). */
export async function startWorkflowRunner(databaseUrl: string, env: Record<string, string> = {}): Promise<WorkflowRunnerPeer> {
  const config = loadWorkflowRunnerConfig({ DATABASE_URL: databaseUrl, GRPC_HOST: '127.0.0.1', GRPC_PORT: '0', INGRESS_HOST: '127.0.0.1', INGRESS_PORT: '0', ...env });
  const bus = new InProcessEventBus({ consumers: [], logger });
  const service = await buildWorkflowRunnerService(config, { logger, bus });
  const { port } = await service.start();
  const address = `127.0.0.1:${port}`;
  const channel = new GrpcChannel(address, { defaultDeadlineMs: 20_000 });
  const workflows: PromiseClient<typeof WorkflowServiceService> = channel.client(WorkflowServiceService);
  return {
    address,
    workflows,
    executions: channel.client(ExecutionServiceService),
    async createWorkflow(tenant, nodes = [{ id: 'call', type: 'integration', config: { service: 'http', url: 'https://api.example.com/orders', method: 'GET' } }]) {
      const { workflow } = await workflows.createWorkflow({ name: 'Order lookup', nodesJson: JSON.stringify(nodes), edgesJson: '[]' }, { principal: tenant.principal });
      return workflow!.id;
    },
    async stop() {
      channel.close();
      await service.stop();
      await bus.close();
    },
  };
}
