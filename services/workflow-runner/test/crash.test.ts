import { fileURLToPath } from 'node:url';
import { GrpcChannel } from '@agent-platform/kit/grpc';
import { ManualClock, spawnChildService, startReceiver, type TestDatabase } from '@agent-platform/kit/testing';
import { ExecutionServiceService, WorkflowServiceService } from '@agent-platform/proto/workflows/v1';
import { describe, expect } from 'vitest';
import { databaseTest, executionReaching, newTenant, startRunner, statusesOf, type TestTenant } from './support/harness.js';

const PACKAGE_DIR = fileURLToPath(new URL('..', import.meta.url));
// Short leases, so the survivor takes over within a second or two of the crash.
const ENV = { EXECUTION_LEASE_MS: '1000', EXECUTION_POLL_INTERVAL_MS: '200' };

async function spawnRunner(database: TestDatabase, onTestFinished: (fn: () => Promise<void>) => void) {
  const child = await spawnChildService('test/support/runner-process.ts', {
    cwd: PACKAGE_DIR,
    env: { DATABASE_URL: database.url, GRPC_HOST: '127.0.0.1', GRPC_PORT: '0', INGRESS_HOST: '127.0.0.1', INGRESS_PORT: '0', ALLOW_PRIVATE_NETWORK_URLS: 'true', ...ENV },
  });
  const channel = new GrpcChannel(`127.0.0.1:${child.ports[0]}`, { defaultDeadlineMs: 15_000 });
  const kill = async () => {
    channel.close();
    await child.kill();
  };
  onTestFinished(kill);
  return { workflows: channel.client(WorkflowServiceService), executions: channel.client(ExecutionServiceService), kill };
}

async function startInChild(child: Awaited<ReturnType<typeof spawnRunner>>, tenant: TestTenant, nodes: unknown[], edges: unknown[]): Promise<{ workflowId: string; executionId: string }> {
  const { workflow } = await child.workflows.createWorkflow({ name: 'Crash', nodesJson: JSON.stringify(nodes), edgesJson: JSON.stringify(edges) }, { principal: tenant.principal });
  const { execution } = await child.executions.executeWorkflow({ workflowId: workflow!.id, inputJson: '{}', wait: false, waitMs: 0 }, { principal: tenant.principal });
  return { workflowId: workflow!.id, executionId: execution!.id };
}

describe('a runner SIGKILLed mid-execution', { timeout: 60_000 }, () => {
  databaseTest('another runner resumes the execution after its last finished node, without repeating it', async ({ database, onTestFinished }) => {
    // The first request to /second is held: the runner is killed while waiting for it.
    let seconds = 0;
    const peer = await startReceiver((request) => (request.path === '/second' && (seconds += 1) === 1 ? { hold: 'answer' } : { json: { path: request.path } }));
    const child = await spawnRunner(database, onTestFinished);
    const tenant = newTenant();
    const { workflowId, executionId } = await startInChild(
      child,
      tenant,
      [
        { id: 'first', type: 'integration', config: { service: 'http', url: peer.url('/first'), method: 'POST' } },
        { id: 'second', type: 'integration', config: { service: 'http', url: peer.url('/second'), method: 'GET' } },
      ],
      [{ source: 'first', target: 'second' }],
    );
    await peer.waitFor(1, { match: '/second' });
    await child.kill();

    const survivor = await startRunner(database, ENV);
    onTestFinished(() => survivor.stop());
    const execution = await executionReaching(survivor.executions, tenant, { workflowId, executionId }, 'completed');
    expect(statusesOf(execution)).toEqual({ first: 'completed', second: 'completed' });
    // The POST had recorded its result: not repeated. The GET (a safe method) was run again.
    expect(peer.received('/first')).toHaveLength(1);
    expect(peer.received('/second')).toHaveLength(2);
  });

  databaseTest('a node with side effects left without a result fails the execution with the reason, and is not repeated', async ({ database, onTestFinished }) => {
    // Held: the runner is killed while waiting for the answer.
    const peer = await startReceiver({ hold: 'answer' });
    const child = await spawnRunner(database, onTestFinished);
    const tenant = newTenant();
    const { workflowId, executionId } = await startInChild(child, tenant, [{ id: 'charge', type: 'integration', config: { service: 'http', url: peer.url('/charge'), method: 'POST' } }], []);
    await peer.waitFor(1, { match: '/charge' });
    await child.kill();

    const survivor = await startRunner(database, ENV);
    onTestFinished(() => survivor.stop());
    const execution = await executionReaching(survivor.executions, tenant, { workflowId, executionId }, 'failed');
    expect(execution.error).toEqual({ nodeId: 'charge', message: expect.stringContaining('not repeated') });
    expect(peer.received('/charge')).toHaveLength(1);
  });

  databaseTest('a node with side effects left in doubt is not repeated even when its retry allows more attempts', async ({ database, onTestFinished }) => {
    const peer = await startReceiver({ hold: 'answer' });
    const child = await spawnRunner(database, onTestFinished);
    const tenant = newTenant();
    const charge = { id: 'charge', type: 'integration', config: { service: 'http', url: peer.url('/charge'), method: 'POST' }, retry: { max_attempts: 5, backoff_seconds: 0 } };
    const { workflowId, executionId } = await startInChild(child, tenant, [charge], []);
    await peer.waitFor(1, { match: '/charge' });
    await child.kill();

    const survivor = await startRunner(database, ENV);
    onTestFinished(() => survivor.stop());
    const execution = await executionReaching(survivor.executions, tenant, { workflowId, executionId }, 'failed');
    expect(execution.nodeExecutions[0]).toMatchObject({ status: 'failed', attempts: 1, error: expect.stringContaining('not repeated') });
    expect(peer.received('/charge')).toHaveLength(1);
  });

  describe.each([
    { outcome: 'approved', decide: true as boolean | undefined, output: { approved: true }, shipped: 1 },
    { outcome: 'rejected', decide: false as boolean | undefined, output: { approved: false }, shipped: 0 },
    { outcome: 'timed out', decide: undefined, output: { approved: false, timed_out: true }, shipped: 0 },
  ])('an approval waiting across a SIGKILL of its runner, then $outcome on another runner', ({ decide, output, shipped }) => {
    databaseTest('finishes once, announced once', async ({ database, onTestFinished }) => {
      const peer = await startReceiver();
      const child = await spawnRunner(database, onTestFinished);
      const tenant = newTenant();
      const { workflowId, executionId } = await startInChild(
        child,
        tenant,
        [
          { id: 'approve', type: 'approval', config: { message: 'Ship it?', timeout_seconds: 3_600 } },
          { id: 'route', type: 'condition', config: { rules: [{ if: 'nodes.approve.output.approved', goto: 'ship' }] } },
          { id: 'ship', type: 'integration', config: { service: 'http', url: peer.url('/ship'), method: 'POST' } },
        ],
        [{ source: 'approve', target: 'route' }],
      );
      await executionReaching(child.executions, tenant, { workflowId, executionId }, 'waiting', 10_000);
      await child.kill();

      // The survivor's clock starts where the child's real one had got to; the test moves it past the time-out.
      const clock = new ManualClock(Date.now());
      const survivor = await startRunner(database, ENV, { clock });
      onTestFinished(() => survivor.stop());
      if (decide === undefined) clock.advance(3_600_000);
      else await survivor.executions.decideApproval({ workflowId, executionId, nodeId: 'approve', approved: decide }, { principal: tenant.principal });
      const execution = await executionReaching(survivor.executions, tenant, { workflowId, executionId }, 'completed');
      expect(JSON.parse(execution.nodeExecutions[0]!.outputJson!)).toMatchObject(output);
      expect(peer.received('/ship')).toHaveLength(shipped);
      const announced = await database.query(`select 1 from outbox where payload->>'type' = 'workflow.execution.waiting' and payload->'data'->>'execution_id' = $1`, [executionId]);
      expect(announced).toHaveLength(1);
    });
  });
});
