import { verifyWebhook, type AgentPlatformClient, type Execution } from '@agent-platform/client';
import { startReceiver, type Receiver } from '@agent-platform/kit/testing';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Api, ISO_MS, newAccount, newApiKey } from './harness/client.js';
import { ofTenant } from './harness/deliveries.js';
import { expectError, expectStatus } from './harness/results.js';
import { createWorkflow, nodeStatuses, runSync } from './harness/workflows.js';

/** A peer: /hooks takes webhook deliveries, /fail… answers 503 to the first two requests of each path, the rest echo. */
let peer: Receiver;
beforeAll(async () => {
  const seen = new Map<string, number>();
  peer = await startReceiver((request) => {
    if (request.path.startsWith('/hooks')) return { status: 204 };
    const count = (seen.get(request.path) ?? 0) + 1;
    seen.set(request.path, count);
    if (request.path.startsWith('/fail') && count <= 2) return { status: 503, json: { error: 'busy' } };
    return { json: { path: request.path, received: request.json ?? null } };
  });
});
afterAll(() => peer.close());

const http = (id: string, path: string, extra: Record<string, unknown> = {}) => ({ id, type: 'integration', config: { service: 'http', url: peer.url(path), method: 'POST', ...extra } });

function executionPath(execution: Execution) {
  return { params: { path: { workflow_id: execution.workflow_id, execution_id: execution.id } } };
}

function decide(client: AgentPlatformClient, execution: Execution, nodeId: string, decision: 'approve' | 'reject', comment?: string) {
  const params = { path: { workflow_id: execution.workflow_id, execution_id: execution.id, node_id: nodeId } };
  return client.POST(`/api/v1/workflows/{workflow_id}/executions/{execution_id}/nodes/{node_id}/${decision}`, { params, ...(comment === undefined ? {} : { body: { comment } }) });
}

/** Reads the execution until its status is `status`. */
async function reaches(client: AgentPlatformClient, execution: Execution, status: string): Promise<Execution> {
  return vi.waitFor(
    async () => {
      const read = expectStatus(await client.GET('/api/v1/workflows/{workflow_id}/executions/{execution_id}', executionPath(execution)));
      expect(read.status).toBe(status);
      return read;
    },
    { timeout: 20_000, interval: 50 },
  );
}

const nodeOf = (execution: Execution, nodeId: string) => execution.node_executions.find((node) => node.node_id === nodeId)!;

describe('workflows that wait for people (decisions §13)', () => {
  it('an approval parks the run, a webhook announces it, and an approval through REST lets it finish', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const webhook = expectStatus(await account.client.POST('/api/v1/webhooks', { body: { url: peer.url('/hooks/waiting'), events: ['workflow.execution.waiting'] } }), 201);
    const workflow = await createWorkflow(api, account, {
      name: 'Refunds',
      nodes: [{ id: 'approve', type: 'approval', config: { message: 'Refund {{ input.amount }} EUR to {{ input.customer }}?', timeout_seconds: 3_600 } }, http('refund', '/refund', { body: { approved: '{{ nodes.approve.output.approved }}' } })],
      edges: [{ source: 'approve', target: 'refund' }],
    });

    const waiting = await runSync(api, account, workflow.id, { amount: 40, customer: 'Ana' });
    expect(waiting.status).toBe('waiting');
    expect(nodeStatuses(waiting)).toEqual({ approve: 'waiting', refund: 'pending' });
    expect(nodeOf(waiting, 'approve').output).toEqual({ message: 'Refund 40 EUR to Ana?', expires_at: expect.stringMatching(ISO_MS) });

    const [delivery] = await peer.waitFor(1, { match: (request) => request.path === '/hooks/waiting' && ofTenant(account.tenantId)(request), timeoutMs: 15_000 });
    const event = verifyWebhook(delivery!.body, delivery!.headers, webhook.signing_secret);
    expect(event).toMatchObject({
      type: 'workflow.execution.waiting',
      data: { execution_id: waiting.id, workflow_id: workflow.id, node_id: 'approve', message: 'Refund 40 EUR to Ana?', expires_at: (nodeOf(waiting, 'approve').output as { expires_at: string }).expires_at },
    });

    const approved = expectStatus(await decide(account.client, waiting, 'approve', 'approve', 'fine by finance'));
    expect(nodeOf(approved, 'approve')).toMatchObject({ status: 'completed', output: { approved: true, decided_by: account.userId, comment: 'fine by finance', decided_at: expect.stringMatching(ISO_MS) } });
    const done = await reaches(account.client, waiting, 'completed');
    expect(nodeStatuses(done)).toEqual({ approve: 'completed', refund: 'completed' });
    expect(peer.received((request) => request.path === '/refund' && JSON.stringify(request.json).includes('"approved":"true"'))).toHaveLength(1);

    // Decided once: again, either way, is 409.
    expectError(await decide(account.client, waiting, 'approve', 'reject'), 409, 'conflict');
  });

  it('a rejection, a time-out and a cancel each end the wait; what cannot be decided is 404, 409 or 403', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const { client } = account;
    const workflow = await createWorkflow(api, account, { name: 'Gate', nodes: [{ id: 'gate', type: 'approval', config: {} }, http('after', '/after')], edges: [{ source: 'gate', target: 'after' }] });

    const rejected = await runSync(api, account, workflow.id);
    expect(nodeOf(expectStatus(await decide(client, rejected, 'gate', 'reject')), 'gate').output).toMatchObject({ approved: false, comment: null });
    await reaches(client, rejected, 'completed');

    const missing = await runSync(api, account, workflow.id);
    expectError(await decide(client, missing, 'nobody', 'approve'), 404, 'not_found');
    expectError(await decide(client, missing, 'after', 'approve'), 409, 'conflict');
    expectError(await decide(client, missing, 'gate', 'approve', 'x'.repeat(2_001)), 422, 'validation_error', ['comment']);
    const stranger = await newAccount(api);
    expectError(await decide(stranger.client, missing, 'gate', 'approve'), 404, 'not_found');
    const reader = await newApiKey(api, account, ['workflows:read']);
    expectError(await decide(reader.client, missing, 'gate', 'approve'), 403, 'forbidden');
    const cancelled = expectStatus(await client.POST('/api/v1/workflows/{workflow_id}/executions/{execution_id}/cancel', executionPath(missing)));
    expect(cancelled.status).toBe('cancelled');
    expect(nodeOf(cancelled, 'gate')).toMatchObject({ status: 'failed', error: 'cancelled' });
    expectError(await decide(client, missing, 'gate', 'approve'), 409, 'conflict');

    const brief = await createWorkflow(api, account, { name: 'Brief', nodes: [{ id: 'gate', type: 'approval', config: { timeout_seconds: 1 } }] });
    const timedOut = await reaches(client, await runSync(api, account, brief.id), 'completed');
    expect(nodeOf(timedOut, 'gate').output).toEqual({ approved: false, timed_out: true });
    expect(timedOut.output).toEqual({ approved: false, timed_out: true });
    expectError(await decide(client, timedOut, 'gate', 'approve'), 409, 'conflict');

    // Waiting executions are listed by their status.
    const listed = expectStatus(await client.GET('/api/v1/workflows/{workflow_id}/executions', { params: { path: { workflow_id: workflow.id }, query: { status: 'waiting' } } }));
    expect(listed.items).toEqual([]);
  });

  it('a wait node holds the run for its seconds, then it goes on', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const workflow = await createWorkflow(api, account, { name: 'Later', nodes: [{ id: 'pause', type: 'wait', config: { seconds: 1 } }, http('ping', '/ping')], edges: [{ source: 'pause', target: 'ping' }] });
    const waiting = await runSync(api, account, workflow.id);
    expect(waiting.status).toBe('waiting');
    const listed = expectStatus(await account.client.GET('/api/v1/workflows/{workflow_id}/executions', { params: { path: { workflow_id: workflow.id }, query: { status: 'waiting' } } }));
    expect(listed.items.map((item) => item.id)).toEqual([waiting.id]);
    const done = await reaches(account.client, waiting, 'completed');
    expect(Date.parse(nodeOf(done, 'ping').started_at!) - Date.parse(nodeOf(done, 'pause').started_at!)).toBeGreaterThanOrEqual(1_000);
  });
});

describe('workflows that retry and go on past errors (decisions §13)', () => {
  it('a node failing twice then succeeding shows attempts 3; on_error continue runs the successors with {error}', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const workflow = await createWorkflow(api, account, {
      name: 'Flaky',
      nodes: [
        { ...http('flaky', '/fail-twice'), retry: { max_attempts: 3, backoff_seconds: 0.05 } },
        { ...http('doomed', '/fail-always', { body: {} }), on_error: 'continue' },
        http('report', '/report', { body: { error: '{{ nodes.doomed.output.error }}' } }),
      ],
      edges: [
        { source: 'flaky', target: 'doomed' },
        { source: 'doomed', target: 'report' },
      ],
    });
    expect(workflow.nodes[0]).toMatchObject({ retry: { max_attempts: 3, backoff_seconds: 0.05 } });
    expect(workflow.nodes[1]).toMatchObject({ on_error: 'continue' });
    const run = await runSync(api, account, workflow.id);
    expect(run.status, JSON.stringify(run)).toBe('completed');
    expect(run.node_executions.map((node) => [node.node_id, node.status, node.attempts])).toEqual([
      ['flaky', 'completed', 3],
      ['doomed', 'failed', 1],
      ['report', 'completed', 1],
    ]);
    expect(nodeOf(run, 'doomed').output).toEqual({ error: nodeOf(run, 'doomed').error });
    expect(peer.received('/report').at(-1)!.json).toEqual({ error: expect.stringContaining('HTTP 503') });
  });

  it('names a bad retry or on_error by its path', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const answer = await account.client.POST('/api/v1/workflows', {
      body: { name: 'Bad', nodes: [{ ...http('a', '/a'), retry: { max_attempts: 0 } }, { ...http('b', '/b'), on_error: 'shrug' }, { id: 'c', type: 'wait', config: {} }] },
    });
    expectError(answer, 422, 'validation_error', ['nodes[0].retry.max_attempts', 'nodes[1].on_error', 'nodes[2].config']);
  });
});
