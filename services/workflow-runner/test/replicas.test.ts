import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, vi } from 'vitest';
import { databaseTest, newTenant, startHoldingReceiver, startRunner } from './support/harness.js';

describe('several runners', { timeout: 30_000 }, () => {
  databaseTest('share the work: what one runner has no room for, another claims and runs', async ({ database, onTestFinished }) => {
    const { url: receiverUrl, held } = await startHoldingReceiver(onTestFinished);
    // A runs one execution at a time; B only claims.
    const env = { EXECUTION_POLL_INTERVAL_MS: '100', EXECUTION_LEASE_MS: '5000' };
    const busy = await startRunner(database, { ...env, EXECUTION_CONCURRENCY: '1' });
    onTestFinished(() => busy.stop());
    const idle = await startRunner(database, env);
    onTestFinished(() => idle.stop());
    const tenant = newTenant();
    const url = `${receiverUrl}/wait`;
    const workflow = await busy.createWorkflow(tenant, { nodes: [{ id: 'wait', type: 'integration', config: { service: 'http', url, method: 'GET' } }] });
    const started = await Promise.all(
      [1, 2, 3].map(async (n) => (await busy.executions.executeWorkflow({ workflowId: workflow.id, inputJson: JSON.stringify({ n }), wait: false, waitMs: 0 }, { principal: tenant.principal })).execution!.id),
    );
    // All three reach the receiver: one run by the busy runner, two claimed by the other.
    await vi.waitFor(() => expect(held).toHaveLength(3), { timeout: 10_000, interval: 50 });
    const owners = await database.query<{ lease_owner: string }>(`select lease_owner from executions where id = any($1)`, [started]);
    expect(new Set(owners.map((row) => row.lease_owner)).size).toBe(2);
    for (const response of held) response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    await vi.waitFor(
      async () => {
        const rows = await database.query<{ status: string }>(`select status from executions where id = any($1)`, [started]);
        expect(rows.map((row) => row.status)).toEqual(['completed', 'completed', 'completed']);
      },
      { timeout: 10_000, interval: 50 },
    );
  });

  databaseTest('a cancel that reaches another runner stops the run where it is, at the holder\'s next lease renewal', async ({ database, onTestFinished }) => {
    let arrived: () => void = () => undefined;
    const arrival = new Promise<void>((resolve) => (arrived = resolve));
    let closed: () => void = () => undefined;
    const connectionClosed = new Promise<void>((resolve) => (closed = resolve));
    const server = createServer((request, response) => {
      request.resume();
      // Held: only the holder aborting its call ends this request.
      response.on('close', closed);
      arrived();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    onTestFinished(async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });
    const env = { EXECUTION_LEASE_MS: '1000' };
    const holder = await startRunner(database, env);
    onTestFinished(() => holder.stop());
    const other = await startRunner(database, env);
    onTestFinished(() => other.stop());
    const tenant = newTenant();
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/wait`;
    const workflow = await holder.createWorkflow(tenant, { nodes: [{ id: 'wait', type: 'integration', config: { service: 'http', url, timeout_ms: 60_000 } }] });
    const { execution } = await holder.executions.executeWorkflow({ workflowId: workflow.id, inputJson: '{}', wait: false, waitMs: 0 }, { principal: tenant.principal });
    await arrival;
    const cancelled = await other.executions.cancelExecution({ workflowId: workflow.id, executionId: execution!.id }, { principal: tenant.principal });
    expect(cancelled.execution?.status).toBe('cancelled');
    // The holder learns it at its next renewal (a third of the lease) and aborts its call.
    await connectionClosed;
    const { execution: read } = await other.executions.getExecution({ workflowId: workflow.id, executionId: execution!.id }, { principal: tenant.principal });
    expect(read?.status).toBe('cancelled');
    expect(read?.nodeExecutions.find((node) => node.nodeId === 'wait')).toMatchObject({ status: 'failed', error: 'cancelled' });
  });
});
