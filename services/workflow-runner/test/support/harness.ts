import { createLogger, newId, type Clock, type InProcessHttp } from '@agent-platform/kit';
import { InProcessEventBus } from '@agent-platform/kit/events';
import { GrpcChannel, PrincipalKind, type Principal, type PromiseClient } from '@agent-platform/kit/grpc';
import { databaseFixture, type TestDatabase } from '@agent-platform/kit/testing';
import { ExecutionServiceService, WorkflowServiceService, type Execution, type Workflow } from '@agent-platform/proto/workflows/v1';
import { expect, test as base, vi } from 'vitest';
import type { AgentChat } from '../../src/agents/agent-chat.js';
import { migrations, openDatabase } from '../../src/database.js';
import { buildWorkflowRunnerService, loadWorkflowRunnerConfig } from '../../src/service.js';
import { TestAgentDirectory } from './agent-directory.js';
import { echoAgents } from './echo-agents.js';

export { TestAgentDirectory } from './agent-directory.js';
export { echoAgents } from './echo-agents.js';

// TEST_LOG_LEVEL=debug shows the service's logs while a test is investigated.
export const logger = createLogger({ service: 'workflow-runner-test', level: process.env.TEST_LOG_LEVEL === 'debug' ? 'debug' : 'silent' });
export { expectError } from '@agent-platform/kit/testing';

export interface TestTenant {
  tenantId: string;
  /** A member of the tenant, as the gateway would forward them. */
  principal: Principal;
}

export function newTenant(role = 'member'): TestTenant {
  const tenantId = newId('tenant');
  return { tenantId, principal: { kind: PrincipalKind.KIND_USER, userId: newId('user'), apiKeyId: '', tenantId, role, scopes: [] } };
}


export interface RunnerHarness {
  workflows: PromiseClient<typeof WorkflowServiceService>;
  executions: PromiseClient<typeof ExecutionServiceService>;
  /** The inbound-webhook ingress, `http://127.0.0.1:<port>`. */
  ingressUrl: string;
  /** The same ingress without its port, as the all-in-one gateway calls it. */
  inProcessIngress: InProcessHttp;
  /** The agents each tenant has, as agent nodes are checked against at save. */
  agents: TestAgentDirectory;
  createWorkflow(tenant: TestTenant, graph: { nodes: unknown[]; edges?: unknown[]; name?: string }): Promise<Workflow>;
  /** Runs by hand and waits for the end (at most 30 s). */
  runSync(tenant: TestTenant, workflowId: string, input?: Record<string, unknown>): Promise<Execution>;
  stop(): Promise<void>;
}

export interface RunnerOptions {
  /** Where agent nodes chat; default echoAgents. */
  agents?: AgentChat;
  /** Which agents tenants have; default an empty TestAgentDirectory. */
  directory?: TestAgentDirectory;
  /** The runner's clock (a ManualClock a test moves past wake-ups, back-offs and time-outs); default the system's. */
  clock?: Clock;
}

export async function startRunner(database: TestDatabase, env: Record<string, string> = {}, options: RunnerOptions = {}): Promise<RunnerHarness> {
  const config = loadWorkflowRunnerConfig({
    DATABASE_URL: database.url,
    GRPC_HOST: '127.0.0.1',
    GRPC_PORT: '0',
    INGRESS_HOST: '127.0.0.1',
    INGRESS_PORT: '0',
    ALLOW_PRIVATE_NETWORK_URLS: 'true',
    ...env,
  });
  const bus = new InProcessEventBus({ consumers: [], logger });
  const directory = options.directory ?? new TestAgentDirectory();
  const service = await buildWorkflowRunnerService(config, { logger, bus, agents: options.agents ?? echoAgents, agentDirectory: directory, clock: options.clock });
  const { port, ingressPort } = await service.start();
  const channel = new GrpcChannel(`127.0.0.1:${port}`, { defaultDeadlineMs: 40_000 });
  const workflows = channel.client(WorkflowServiceService);
  const executions = channel.client(ExecutionServiceService);
  return {
    workflows,
    executions,
    ingressUrl: `http://127.0.0.1:${ingressPort}`,
    inProcessIngress: service.inProcessIngress,
    agents: directory,
    async createWorkflow(tenant, graph) {
      const { workflow } = await workflows.createWorkflow(
        { name: graph.name ?? 'Test', nodesJson: JSON.stringify(graph.nodes), edgesJson: JSON.stringify(graph.edges ?? []) },
        { principal: tenant.principal },
      );
      return workflow!;
    },
    async runSync(tenant, workflowId, input = {}) {
      const { execution } = await executions.executeWorkflow({ workflowId, inputJson: JSON.stringify(input), wait: true, waitMs: 30_000 }, { principal: tenant.principal });
      return execution!;
    },
    async stop() {
      channel.close();
      await service.stop();
      await bus.close();
    },
  };
}

/** `test` with a file-scoped `database` cloned from the migrated template. */
export const databaseTest = base.extend(
  'database',
  { scope: 'file' },
  databaseFixture({
    name: 'workflows',
    migrations,
    migrate: async (url) => {
      const orm = await openDatabase(url, logger);
      await orm.close();
    },
  }),
);

/** `databaseTest` plus a file-scoped `runner`: the real workflow-runner on 127.0.0.1:0. */
export function runnerTest(env: Record<string, string> = {}, options: RunnerOptions = {}) {
  return databaseTest.extend('runner', { scope: 'file' }, async ({ database }, { onCleanup }): Promise<RunnerHarness> => {
    const harness = await startRunner(database, env, options);
    onCleanup(() => harness.stop());
    return harness;
  });
}

export function statusesOf(execution: Execution): Record<string, string> {
  return Object.fromEntries(execution.nodeExecutions.map((node) => [node.nodeId, node.status]));
}

/** The execution, read until its status is `status` (the engine's own record, as the API shows it). */
export function executionReaching(
  executions: PromiseClient<typeof ExecutionServiceService>,
  tenant: TestTenant,
  ids: { workflowId: string; executionId: string },
  status: string,
  timeoutMs = 20_000,
): Promise<Execution> {
  return vi.waitFor(
    async () => {
      const { execution } = await executions.getExecution(ids, { principal: tenant.principal });
      expect(execution?.status).toBe(status);
      return execution!;
    },
    { timeout: timeoutMs, interval: 50 },
  );
}
