import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { GrpcChannel } from '@agent-platform/kit/grpc';
import { spawnChildService, type TestDatabase } from '@agent-platform/kit/testing';
import { ExecutionServiceService, WorkflowServiceService } from '@agent-platform/proto/workflows/v1';
import { describe, expect, vi } from 'vitest';
import { databaseTest, newTenant, startRunner, statusesOf, type TestTenant } from './support/harness.js';

const PACKAGE_DIR = fileURLToPath(new URL('..', import.meta.url));
// Short leases, so the survivor takes over within a second or two of the crash.
const ENV = { EXECUTION_LEASE_MS: '1000', EXECUTION_POLL_INTERVAL_MS: '200' };

/** A receiver that holds the requests of one path until released, counting every request per path. */
async function startPeer() {
  const counts = new Map<string, number>();
  const held: ServerResponse[] = [];
  let holdPath = '';
  const arrived: ((path: string) => void)[] = [];
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    request.resume();
    request.on('end', () => {
      const path = request.url ?? '';
      counts.set(path, (counts.get(path) ?? 0) + 1);
      for (const notify of arrived.splice(0)) notify(path);
      if (path === holdPath) held.push(response);
      else response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ path }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    count: (path: string) => counts.get(path) ?? 0,
    hold(path: string) {
      holdPath = path;
    },
    /** Resolves when a request for `path` arrives. */
    arrival(path: string): Promise<void> {
      return new Promise((resolve) => {
        const check = (got: string) => (got === path ? resolve() : arrived.push(check));
        arrived.push(check);
      });
    },
    async close() {
      for (const response of held) response.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

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
    const peer = await startPeer();
    onTestFinished(() => peer.close());
    peer.hold('/second');
    const child = await spawnRunner(database, onTestFinished);
    const tenant = newTenant();
    const secondArrived = peer.arrival('/second');
    const { workflowId, executionId } = await startInChild(
      child,
      tenant,
      [
        { id: 'first', type: 'integration', config: { service: 'http', url: `${peer.base}/first`, method: 'POST' } },
        { id: 'second', type: 'integration', config: { service: 'http', url: `${peer.base}/second`, method: 'GET' } },
      ],
      [{ source: 'first', target: 'second' }],
    );
    await secondArrived;
    await child.kill();
    peer.hold('');

    const survivor = await startRunner(database, ENV);
    onTestFinished(() => survivor.stop());
    const execution = await vi.waitFor(
      async () => {
        const { execution: read } = await survivor.executions.getExecution({ workflowId, executionId }, { principal: tenant.principal });
        expect(read?.status).toBe('completed');
        return read!;
      },
      { timeout: 20_000, interval: 100 },
    );
    expect(statusesOf(execution)).toEqual({ first: 'completed', second: 'completed' });
    // The POST had recorded its result: not repeated. The GET (a safe method) was run again.
    expect(peer.count('/first')).toBe(1);
    expect(peer.count('/second')).toBe(2);
  });

  databaseTest('a node with side effects left without a result fails the execution with the reason, and is not repeated', async ({ database, onTestFinished }) => {
    const peer = await startPeer();
    onTestFinished(() => peer.close());
    peer.hold('/charge');
    const child = await spawnRunner(database, onTestFinished);
    const tenant = newTenant();
    const charged = peer.arrival('/charge');
    const { workflowId, executionId } = await startInChild(child, tenant, [{ id: 'charge', type: 'integration', config: { service: 'http', url: `${peer.base}/charge`, method: 'POST' } }], []);
    await charged;
    await child.kill();

    const survivor = await startRunner(database, ENV);
    onTestFinished(() => survivor.stop());
    const execution = await vi.waitFor(
      async () => {
        const { execution: read } = await survivor.executions.getExecution({ workflowId, executionId }, { principal: tenant.principal });
        expect(read?.status).toBe('failed');
        return read!;
      },
      { timeout: 20_000, interval: 100 },
    );
    expect(execution.error).toEqual({ nodeId: 'charge', message: expect.stringContaining('not repeated') });
    expect(peer.count('/charge')).toBe(1);
  });
});
