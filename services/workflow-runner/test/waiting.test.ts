import { ManualClock, startReceiver } from '@agent-platform/kit/testing';
import type { Execution } from '@agent-platform/proto/workflows/v1';
import { describe, expect, vi } from 'vitest';
import { databaseTest, executionReaching, expectError, newTenant, startRunner, statusesOf, type RunnerHarness, type TestTenant } from './support/harness.js';

// Claims poll often here, so a woken execution is taken up within a tenth of a second.
const ENV = { EXECUTION_POLL_INTERVAL_MS: '100' };

function nodeOf(execution: Execution | undefined, nodeId: string) {
  const node = execution?.nodeExecutions.find((candidate) => candidate.nodeId === nodeId);
  return { ...node, output: node?.outputJson === undefined ? undefined : (JSON.parse(node.outputJson) as Record<string, unknown>) };
}

async function read(runner: RunnerHarness, tenant: TestTenant, workflowId: string, executionId: string): Promise<Execution> {
  return (await runner.executions.getExecution({ workflowId, executionId }, { principal: tenant.principal })).execution!;
}

/** Until the execution's status is `status`. */
function until(runner: RunnerHarness, tenant: TestTenant, workflowId: string, executionId: string, status: string): Promise<Execution> {
  return executionReaching(runner.executions, tenant, { workflowId, executionId }, status, 15_000);
}

function decide(runner: RunnerHarness, tenant: TestTenant, execution: Execution, nodeId: string, approved: boolean, comment?: string) {
  return runner.executions.decideApproval({ workflowId: execution.workflowId, executionId: execution.id, nodeId, approved, comment }, { principal: tenant.principal });
}

/** approve (an approval) → notify (an http POST that shows the approval's output). */
function approvalGraph(url: string, approval: Record<string, unknown> = {}) {
  return {
    nodes: [
      { id: 'approve', type: 'approval', config: { message: 'Refund {{ input.amount }} EUR?', ...approval } },
      { id: 'notify', type: 'integration', config: { service: 'http', url, method: 'POST', body: { approved: '{{ nodes.approve.output.approved }}' } } },
    ],
    edges: [{ source: 'approve', target: 'notify' }],
  };
}

describe('approval nodes', { timeout: 60_000 }, () => {
  databaseTest('park the execution waiting, announce it, and go on once approved through the API', async ({ database, onTestFinished }) => {
    const receiver = await startReceiver();
    const runner = await startRunner(database, ENV);
    onTestFinished(() => runner.stop());
    const tenant = newTenant();
    const workflow = await runner.createWorkflow(tenant, approvalGraph(receiver.url('/notify')));

    const waiting = await runner.runSync(tenant, workflow.id, { amount: 120 });
    expect(waiting.status).toBe('waiting');
    expect(statusesOf(waiting)).toEqual({ approve: 'waiting', notify: 'pending' });
    const asked = nodeOf(waiting, 'approve');
    expect(asked.output).toEqual({ message: 'Refund 120 EUR?', expires_at: expect.any(String) });
    expect(Date.parse(asked.output!.expires_at as string) - Date.now()).toBeGreaterThan(86_000_000);
    // Parked: no runner holds it.
    const [parked] = await database.query<{ lease_owner: string | null; wake_at: Date | null }>(`select lease_owner, wake_at from executions where id = $1`, [waiting.id]);
    expect(parked).toEqual({ lease_owner: null, wake_at: expect.any(Date) });
    const events = await database.query<{ payload: { type: string; data: unknown } }>(`select payload from outbox where payload->>'type' = 'workflow.execution.waiting' and payload->'data'->>'execution_id' = $1`, [waiting.id]);
    expect(events.map((row) => row.payload.data)).toEqual([
      { execution_id: waiting.id, workflow_id: workflow.id, node_id: 'approve', message: 'Refund 120 EUR?', expires_at: asked.output!.expires_at },
    ]);

    const decided = await decide(runner, tenant, waiting, 'approve', true, 'ok by me');
    expect(nodeOf(decided.execution, 'approve')).toMatchObject({ status: 'completed', output: { approved: true, decided_by: tenant.principal.userId, comment: 'ok by me', decided_at: expect.any(String) } });
    const [request] = await receiver.waitFor(1);
    expect(request!.json).toEqual({ approved: 'true' });
    const done = await until(runner, tenant, workflow.id, waiting.id, 'completed');
    expect(statusesOf(done)).toEqual({ approve: 'completed', notify: 'completed' });

    // Decided once: a second decision, either way, is a conflict.
    const again = await expectError(decide(runner, tenant, waiting, 'approve', false), 'conflict');
    expect(again.message).toContain('finished');
  });

  databaseTest('a rejection completes the node with approved false; a condition can route on it', async ({ database, onTestFinished }) => {
    const receiver = await startReceiver();
    const runner = await startRunner(database, ENV);
    onTestFinished(() => runner.stop());
    const tenant = newTenant();
    const workflow = await runner.createWorkflow(tenant, {
      nodes: [
        { id: 'approve', type: 'approval', config: {} },
        { id: 'route', type: 'condition', config: { rules: [{ if: 'nodes.approve.output.approved', goto: 'go' }, { else: 'stop' }] } },
        { id: 'go', type: 'integration', config: { service: 'http', url: receiver.url('/go'), method: 'POST' } },
        { id: 'stop', type: 'integration', config: { service: 'http', url: receiver.url('/stop'), method: 'POST' } },
      ],
      edges: [{ source: 'approve', target: 'route' }],
    });
    const waiting = await runner.runSync(tenant, workflow.id);
    expect(nodeOf(waiting, 'approve').output).toEqual({ message: '', expires_at: expect.any(String) });
    const rejected = await decide(runner, tenant, waiting, 'approve', false);
    expect(nodeOf(rejected.execution, 'approve').output).toMatchObject({ approved: false, comment: null });
    const done = await until(runner, tenant, workflow.id, waiting.id, 'completed');
    expect(statusesOf(done)).toEqual({ approve: 'completed', route: 'completed', go: 'skipped', stop: 'completed' });
    expect(receiver.received().map((request) => request.path)).toEqual(['/stop']);
  });

  databaseTest('time out into approved false, after which a decision is a conflict', async ({ database, onTestFinished }) => {
    const receiver = await startReceiver();
    const clock = new ManualClock();
    const runner = await startRunner(database, ENV, { clock });
    onTestFinished(() => runner.stop());
    const tenant = newTenant();
    const workflow = await runner.createWorkflow(tenant, approvalGraph(receiver.url('/notify'), { timeout_seconds: 1 }));
    const waiting = await runner.runSync(tenant, workflow.id, { amount: 5 });
    expect(waiting.status).toBe('waiting');
    clock.advance(1_000);
    const done = await until(runner, tenant, workflow.id, waiting.id, 'completed');
    expect(nodeOf(done, 'approve')).toMatchObject({ status: 'completed', output: { approved: false, timed_out: true }, durationMs: 1_000 });
    expect((await receiver.waitFor(1))[0]!.json).toEqual({ approved: 'false' });
    const late = await expectError(decide(runner, tenant, waiting, 'approve', true), 'conflict');
    expect(late.message).toContain('finished');
  });

  databaseTest('of decisions racing each other, exactly one lands; the others are conflicts', async ({ database, onTestFinished }) => {
    const receiver = await startReceiver();
    const [first, second] = [await startRunner(database, ENV), await startRunner(database, ENV)];
    onTestFinished(async () => {
      await first.stop();
      await second.stop();
    });
    const tenant = newTenant();
    const workflow = await first.createWorkflow(tenant, approvalGraph(receiver.url('/notify')));
    const waiting = await first.runSync(tenant, workflow.id, { amount: 1 });
    const outcomes = await Promise.allSettled(Array.from({ length: 8 }, (_, index) => decide(index % 2 === 0 ? first : second, tenant, waiting, 'approve', index % 3 === 0)));
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
    const refusals = outcomes.flatMap((outcome) => (outcome.status === 'rejected' ? [(outcome.reason as { code: string }).code] : []));
    expect(refusals).toEqual(Array(7).fill('conflict'));
    await until(first, tenant, workflow.id, waiting.id, 'completed');
    expect(receiver.received()).toHaveLength(1);
  });

  databaseTest('a decision that lands while a runner still holds the execution wakes it as soon as it parks', async ({ database, onTestFinished }) => {
    // The slow branch is held until released: the execution stays running, its approval waiting.
    const receiver = await startReceiver((request) => (request.path === '/slow' ? { hold: 'answer' } : { json: {} }));
    const runner = await startRunner(database, ENV);
    onTestFinished(() => runner.stop());
    const tenant = newTenant();
    const workflow = await runner.createWorkflow(tenant, {
      nodes: [
        { id: 'approve', type: 'approval', config: {} },
        { id: 'slow', type: 'integration', config: { service: 'http', url: receiver.url('/slow'), method: 'POST' } },
        { id: 'after', type: 'integration', config: { service: 'http', url: receiver.url('/after'), method: 'POST' } },
      ],
      edges: [{ source: 'approve', target: 'after' }],
    });
    const { execution: started } = await runner.executions.executeWorkflow({ workflowId: workflow.id, inputJson: '{}', wait: false, waitMs: 0 }, { principal: tenant.principal });
    await receiver.waitFor(1, { match: '/slow' });
    const held = await vi.waitFor(
      async () => {
        const execution = await read(runner, tenant, workflow.id, started!.id);
        expect(statusesOf(execution)).toMatchObject({ approve: 'waiting', slow: 'running' });
        return execution;
      },
      { timeout: 10_000, interval: 50 },
    );
    expect(held.status).toBe('running');
    const decided = await decide(runner, tenant, held, 'approve', true);
    expect(decided.execution?.status).toBe('running');
    expect(receiver.release()).toBe(1);
    const done = await until(runner, tenant, workflow.id, held.id, 'completed');
    expect(statusesOf(done)).toEqual({ approve: 'completed', slow: 'completed', after: 'completed' });
  });

  databaseTest('a PUT while a run waits makes a new version but not a new graph for that run, which finishes on its own', async ({ database, onTestFinished }) => {
    const receiver = await startReceiver();
    const runner = await startRunner(database, ENV);
    onTestFinished(() => runner.stop());
    const tenant = newTenant();
    const workflow = await runner.createWorkflow(tenant, approvalGraph(receiver.url('/v1')));
    const waiting = await runner.runSync(tenant, workflow.id, { amount: 3 });
    expect(waiting).toMatchObject({ status: 'waiting', workflowVersion: 1 });
    const changed = approvalGraph(receiver.url('/v2'));
    const { workflow: updated } = await runner.workflows.updateWorkflow({ workflowId: workflow.id, nodesJson: JSON.stringify(changed.nodes) }, { principal: tenant.principal });
    expect(updated?.version).toBe(2);

    await decide(runner, tenant, waiting, 'approve', true);
    const done = await until(runner, tenant, workflow.id, waiting.id, 'completed');
    expect(done.workflowVersion).toBe(1);
    expect(receiver.received().map((request) => request.path)).toEqual(['/v1']);
    const next = await runner.runSync(tenant, workflow.id, { amount: 4 });
    expect(next.workflowVersion).toBe(2);
  });

  databaseTest('cancel reaches a waiting execution: cancelled, its approval failed, a later decision a conflict', async ({ database, onTestFinished }) => {
    const runner = await startRunner(database, ENV);
    onTestFinished(() => runner.stop());
    const tenant = newTenant();
    const workflow = await runner.createWorkflow(tenant, approvalGraph('https://example.com/never'));
    const waiting = await runner.runSync(tenant, workflow.id, { amount: 1 });
    const { execution: cancelled } = await runner.executions.cancelExecution({ workflowId: workflow.id, executionId: waiting.id }, { principal: tenant.principal });
    expect(cancelled?.status).toBe('cancelled');
    expect(nodeOf(cancelled, 'approve')).toMatchObject({ status: 'failed', error: 'cancelled' });
    await expectError(decide(runner, tenant, waiting, 'approve', true), 'conflict');
    await expectError(runner.executions.cancelExecution({ workflowId: workflow.id, executionId: waiting.id }, { principal: tenant.principal }), 'conflict');
  });

  databaseTest('name what cannot be decided: another tenant, a node not in the graph, a node that is no approval, a long comment', async ({ database, onTestFinished }) => {
    const runner = await startRunner(database, ENV);
    onTestFinished(() => runner.stop());
    const [tenant, stranger] = [newTenant(), newTenant()];
    const workflow = await runner.createWorkflow(tenant, approvalGraph('https://example.com/never'));
    const waiting = await runner.runSync(tenant, workflow.id, { amount: 1 });
    await expectError(decide(runner, stranger, waiting, 'approve', true), 'not_found');
    expect((await expectError(decide(runner, tenant, waiting, 'nobody', true), 'not_found')).message).toBe('Node not found.');
    expect((await expectError(decide(runner, tenant, waiting, 'notify', true), 'conflict')).message).toContain('integration node');
    const long = await expectError(decide(runner, tenant, waiting, 'approve', true, 'x'.repeat(2_001)), 'validation_error');
    expect(long.details.map((detail) => detail.field)).toEqual(['comment']);
    // A viewer may read but not decide.
    await expectError(decide(runner, newTenantViewer(tenant), waiting, 'approve', true), 'forbidden');
    expect((await read(runner, tenant, workflow.id, waiting.id)).status).toBe('waiting');
  });

  databaseTest('two hundred waiting executions hold no runner capacity: another workflow runs meanwhile', async ({ database, onTestFinished }) => {
    const receiver = await startReceiver();
    const runner = await startRunner(database, { ...ENV, EXECUTION_CONCURRENCY: '4' });
    onTestFinished(() => runner.stop());
    const tenant = newTenant();
    const approvals = await runner.createWorkflow(tenant, approvalGraph(receiver.url('/approved')));
    const waiting = await Promise.all(Array.from({ length: 200 }, (_, amount) => runner.runSync(tenant, approvals.id, { amount })));
    expect(new Set(waiting.map((execution) => execution.status))).toEqual(new Set(['waiting']));
    const [{ held }] = (await database.query<{ held: number }>(`select count(*)::int as held from executions where workflow_id = $1 and lease_owner is not null`, [approvals.id])) as [{ held: number }];
    expect(held).toBe(0);

    const plain = await runner.createWorkflow(tenant, { nodes: [{ id: 'call', type: 'integration', config: { service: 'http', url: receiver.url('/plain'), method: 'POST' } }] });
    const runs = await Promise.all(Array.from({ length: 20 }, (_, n) => runner.runSync(tenant, plain.id, { n })));
    expect(runs.map((run) => run.status)).toEqual(Array(20).fill('completed'));

    // And they all still go on when approved.
    await Promise.all(waiting.slice(0, 10).map((execution) => decide(runner, tenant, execution, 'approve', true)));
    await receiver.waitFor(10, { match: '/approved' });
  });
});

describe('wait nodes', { timeout: 60_000 }, () => {
  databaseTest('a wait parks the execution and fires once when its time comes, not before, across a restart of the runner', async ({ database, onTestFinished }) => {
    const receiver = await startReceiver();
    const clock = new ManualClock();
    let runner = await startRunner(database, ENV, { clock });
    const tenant = newTenant();
    const waitThenPing = (seconds: number, path: string) => ({
      nodes: [
        { id: 'pause', type: 'wait', config: { seconds } },
        { id: 'ping', type: 'integration', config: { service: 'http', url: receiver.url(path), method: 'POST' } },
      ],
      edges: [{ source: 'pause', target: 'ping' }],
    });
    const workflow = await runner.createWorkflow(tenant, waitThenPing(2, '/ping'));
    const shorter = await runner.createWorkflow(tenant, waitThenPing(1, '/shorter'));
    const waiting = await runner.runSync(tenant, workflow.id);
    const marker = await runner.runSync(tenant, shorter.id);
    expect(waiting.status).toBe('waiting');
    expect(nodeOf(waiting, 'pause')).toMatchObject({ status: 'waiting', output: { until: expect.any(String) } });
    // No event announces a wait: nobody is asked anything.
    expect(await database.query(`select 1 from outbox where payload->>'type' = 'workflow.execution.waiting' and payload->'data'->>'execution_id' = $1`, [waiting.id])).toEqual([]);
    await runner.stop();
    runner = await startRunner(database, ENV, { clock });
    onTestFinished(() => runner.stop());
    // A second on, the shorter wait fires: the runner looked then, and the longer one was not due.
    clock.advance(1_000);
    await until(runner, tenant, shorter.id, marker.id, 'completed');
    expect((await read(runner, tenant, workflow.id, waiting.id)).status).toBe('waiting');
    clock.advance(1_000);
    const done = await until(runner, tenant, workflow.id, waiting.id, 'completed');
    expect(nodeOf(done, 'pause')).toMatchObject({ status: 'completed', output: nodeOf(waiting, 'pause').output });
    expect(receiver.received('/ping')).toHaveLength(1);
    expect(nodeOf(done, 'ping').startedAt!.getTime() - nodeOf(done, 'pause').startedAt!.getTime()).toBe(2_000);
  });

  databaseTest('a wait until a time already past completes at once', async ({ database, onTestFinished }) => {
    const runner = await startRunner(database, ENV);
    onTestFinished(() => runner.stop());
    const tenant = newTenant();
    const workflow = await runner.createWorkflow(tenant, { nodes: [{ id: 'pause', type: 'wait', config: { until: '2020-01-01T00:00:00Z' } }] });
    const done = await runner.runSync(tenant, workflow.id);
    expect(done.status).toBe('completed');
    expect(JSON.parse(done.outputJson!)).toEqual({ until: expect.any(String) });
  });
});

function newTenantViewer(tenant: TestTenant): TestTenant {
  return { tenantId: tenant.tenantId, principal: { ...tenant.principal, role: 'viewer' } };
}
