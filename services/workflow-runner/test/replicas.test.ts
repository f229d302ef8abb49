import { describe, expect, vi } from 'vitest';
import { startReceiver } from '@agent-platform/kit/testing';
import { databaseTest, newTenant, startRunner } from './support/harness.js';

describe('several runners', { timeout: 30_000 }, () => {
  databaseTest('share the work: what one runner has no room for, another claims and runs', async ({ database, onTestFinished }) => {
    // Each request is held until the test lets them all go.
    const receiver = await startReceiver({ json: {}, hold: 'answer' });
    // A runs one execution at a time; B only claims.
    const env = { EXECUTION_POLL_INTERVAL_MS: '100', EXECUTION_LEASE_MS: '5000' };
    const busy = await startRunner(database, { ...env, EXECUTION_CONCURRENCY: '1' });
    onTestFinished(() => busy.stop());
    const idle = await startRunner(database, env);
    onTestFinished(() => idle.stop());
    const tenant = newTenant();
    const url = receiver.url('/wait');
    const workflow = await busy.createWorkflow(tenant, { nodes: [{ id: 'wait', type: 'integration', config: { service: 'http', url, method: 'GET' } }] });
    const started = await Promise.all(
      [1, 2, 3].map(async (n) => (await busy.executions.executeWorkflow({ workflowId: workflow.id, inputJson: JSON.stringify({ n }), wait: false, waitMs: 0 }, { principal: tenant.principal })).execution!.id),
    );
    // All three reach the receiver: one run by the busy runner, two claimed by the other.
    await receiver.waitFor(3);
    const owners = await database.query<{ lease_owner: string }>(`select lease_owner from executions where id = any($1)`, [started]);
    expect(new Set(owners.map((row) => row.lease_owner)).size).toBe(2);
    expect(receiver.release()).toBe(3);
    await vi.waitFor(
      async () => {
        const rows = await database.query<{ status: string }>(`select status from executions where id = any($1)`, [started]);
        expect(rows.map((row) => row.status)).toEqual(['completed', 'completed', 'completed']);
      },
      { timeout: 10_000, interval: 50 },
    );
  });

  databaseTest('a cancel that reaches another runner stops the run where it is, at the holder\'s next lease renewal', async ({ database, onTestFinished }) => {
    // Held: only the holder aborting its call ends this request.
    const receiver = await startReceiver({ hold: 'answer' });
    const env = { EXECUTION_LEASE_MS: '1000' };
    const holder = await startRunner(database, env);
    onTestFinished(() => holder.stop());
    const other = await startRunner(database, env);
    onTestFinished(() => other.stop());
    const tenant = newTenant();
    const url = receiver.url('/wait');
    const workflow = await holder.createWorkflow(tenant, { nodes: [{ id: 'wait', type: 'integration', config: { service: 'http', url, timeout_ms: 60_000 } }] });
    const { execution } = await holder.executions.executeWorkflow({ workflowId: workflow.id, inputJson: '{}', wait: false, waitMs: 0 }, { principal: tenant.principal });
    await receiver.waitFor(1);
    const cancelled = await other.executions.cancelExecution({ workflowId: workflow.id, executionId: execution!.id }, { principal: tenant.principal });
    expect(cancelled.execution?.status).toBe('cancelled');
    // The holder learns it at its next renewal (a third of the lease) and aborts its call.
    await receiver.waitFor(([request]) => request?.abandonedAt !== undefined);
    const { execution: read } = await other.executions.getExecution({ workflowId: workflow.id, executionId: execution!.id }, { principal: tenant.principal });
    expect(read?.status).toBe('cancelled');
    expect(read?.nodeExecutions.find((node) => node.nodeId === 'wait')).toMatchObject({ status: 'failed', error: 'cancelled' });
  });
});
