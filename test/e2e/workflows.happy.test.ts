import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Api, ISO_MS, id, newAccount } from './harness/client.js';
import { Receiver } from './harness/receiver.js';
import { activate, createWorkflow, finished, nodeStatuses, runSync, type ExecutionBody, type WorkflowBody } from './harness/workflows.js';

let receiver: Receiver;
beforeAll(async () => {
  receiver = await Receiver.start();
});
afterAll(() => receiver.close());

const BRANCHING = {
  name: 'Route orders',
  description: 'big orders go to review',
  nodes: [
    { id: 'start', type: 'webhook', config: { path: '/orders' } },
    { id: 'check', type: 'condition', config: { rules: [{ if: 'input.amount > 100', goto: 'review' }, { else: 'ship' }] } },
    { id: 'review', type: 'integration', config: { service: 'http', url: 'RECEIVER/review', method: 'POST', body: { order: '{{ input.id }}', kind: 'review' } } },
    { id: 'ship', type: 'integration', config: { service: 'http', url: 'RECEIVER/ship', method: 'POST', body: { order: '{{ input.id }}' } } },
  ],
  edges: [
    { source: 'start', target: 'check' },
    { source: 'check', target: 'review' },
    { source: 'check', target: 'ship' },
  ],
};

function branching(): typeof BRANCHING {
  return JSON.parse(JSON.stringify(BRANCHING).replaceAll('RECEIVER', receiver.url)) as typeof BRANCHING;
}

describe('workflows', () => {
  it('are created as drafts, read with their graph and statistics, listed, updated and deleted', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const workflow = await createWorkflow(api, account, branching());
    expect(workflow).toEqual({
      id: expect.stringMatching(id('wf')),
      name: 'Route orders',
      description: 'big orders go to review',
      status: 'draft',
      trigger_type: 'webhook',
      nodes: branching().nodes.map((node): unknown => expect.objectContaining({ id: node.id, type: node.type })),
      edges: branching().edges,
      webhook_url: expect.stringMatching(new RegExp(`/hooks/${workflow.id}/orders$`)),
      last_run_at: null,
      statistics: { total_runs: 0, success_rate: 0, avg_duration: '0.00s' },
      created_at: expect.stringMatching(ISO_MS),
      updated_at: expect.stringMatching(ISO_MS),
    });

    const read = await api.get<WorkflowBody>(`/api/v1/workflows/${workflow.id}`, { token: account.accessToken });
    expect(read.status).toBe(200);
    expect(read.body).toEqual(workflow);

    const listed = await api.get<{ items: { id: string }[]; total: number; page: number; per_page: number }>('/api/v1/workflows', { token: account.accessToken });
    expect(listed.body).toMatchObject({ total: 1, page: 1, per_page: 20, items: [{ id: workflow.id, name: 'Route orders', status: 'draft', trigger_type: 'webhook', last_run_at: null }] });

    const renamed = await api.request<WorkflowBody>('PUT', `/api/v1/workflows/${workflow.id}`, {
      token: account.accessToken,
      json: { name: 'Manual routing', nodes: [{ id: 'only', type: 'condition', config: { rules: [{ else: 'only2' }] } }, { id: 'only2', type: 'integration', config: { service: 'http', url: receiver.url } }], edges: [] },
    });
    expect(renamed.status, JSON.stringify(renamed.body)).toBe(200);
    expect(renamed.body).toMatchObject({ id: workflow.id, name: 'Manual routing', status: 'draft', trigger_type: 'manual', webhook_url: expect.stringMatching(new RegExp(`/hooks/${workflow.id}$`)) });
    expect(renamed.body.updated_at >= workflow.updated_at).toBe(true);

    const deleted = await api.delete(`/api/v1/workflows/${workflow.id}`, { token: account.accessToken });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ success: true, message: expect.any(String) });
    expect((await api.get(`/api/v1/workflows/${workflow.id}`, { token: account.accessToken })).status).toBe(404);
  });

  it('move through draft, active and paused as decisions §7 says, idempotently', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const workflow = await createWorkflow(api, account, { name: 'Lifecycle', nodes: [], edges: [] });
    const step = async (operation: 'pause' | 'resume') => api.post<WorkflowBody>(`/api/v1/workflows/${workflow.id}/${operation}`, { token: account.accessToken });

    expect((await step('resume')).body.status).toBe('active');
    expect((await step('resume')).body).toMatchObject({ id: workflow.id, status: 'active', updated_at: expect.stringMatching(ISO_MS) });
    expect((await step('pause')).body.status).toBe('paused');
    const again = await step('pause');
    expect(again.status).toBe(200);
    expect(again.body.status).toBe('paused');

    // A paused workflow does not run by hand; PUT keeps the status.
    const refused = await api.post(`/api/v1/workflows/${workflow.id}/execute`, { token: account.accessToken, json: {} });
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ error: 'conflict' });
    const put = await api.request<WorkflowBody>('PUT', `/api/v1/workflows/${workflow.id}`, { token: account.accessToken, json: { description: 'still paused' } });
    expect(put.body.status).toBe('paused');

    // A draft can be paused too, and runs by hand while draft.
    const draft = await createWorkflow(api, account, { name: 'Draft', nodes: [], edges: [] });
    const ran = await runSync(api, account, draft.id);
    expect(ran.status).toBe('completed');
    expect((await api.post<WorkflowBody>(`/api/v1/workflows/${draft.id}/pause`, { token: account.accessToken })).body.status).toBe('paused');
  });

  it('execute asynchronously (202) and synchronously (200), branch by CEL, and keep statistics and last_run_at', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const workflow = await createWorkflow(api, account, branching());
    await activate(api, account, workflow.id);
    const before = receiver.received.length;

    const accepted = await api.post<{ execution_id: string; workflow_id: string; status: string; started_at: string }>(`/api/v1/workflows/${workflow.id}/execute`, {
      token: account.accessToken,
      json: { input: { id: 'o-1', amount: 250 } },
    });
    expect(accepted.status).toBe(202);
    expect(accepted.body).toEqual({ execution_id: expect.stringMatching(id('exe')), workflow_id: workflow.id, status: 'running', started_at: expect.stringMatching(ISO_MS) });
    const big = await finished(api, account, workflow.id, accepted.body.execution_id);
    expect(big).toMatchObject({ id: accepted.body.execution_id, execution_id: accepted.body.execution_id, status: 'completed', trigger: 'manual', input: { id: 'o-1', amount: 250 }, error: null });
    expect(nodeStatuses(big)).toEqual({ start: 'completed', check: 'completed', review: 'completed', ship: 'skipped' });
    expect(big.node_executions.find((node) => node.node_id === 'check')?.output).toEqual({ rule: 0, target: 'review' });
    expect(big.output).toMatchObject({ status: 200, body: { ok: true } });
    expect(big.duration_ms).toBeGreaterThanOrEqual(0);
    expect(big.completed_at).toMatch(ISO_MS);

    const small: ExecutionBody = await runSync(api, account, workflow.id, { id: 'o-2', amount: 5 });
    expect(small.status).toBe('completed');
    expect(nodeStatuses(small)).toEqual({ start: 'completed', check: 'completed', review: 'skipped', ship: 'completed' });
    for (const node of small.node_executions.filter((entry) => entry.status === 'completed')) {
      expect(node).toMatchObject({ started_at: expect.stringMatching(ISO_MS), duration_ms: expect.any(Number), error: null });
    }

    const sent = receiver.received.slice(before).map((request) => ({ path: request.path, body: JSON.parse(request.body) as unknown }));
    expect(sent).toEqual(expect.arrayContaining([{ path: '/hooks/review', body: { order: 'o-1', kind: 'review' } }, { path: '/hooks/ship', body: { order: 'o-2' } }]));

    const read = await api.get<WorkflowBody>(`/api/v1/workflows/${workflow.id}`, { token: account.accessToken });
    expect(read.body.statistics).toEqual({ total_runs: 2, success_rate: 1, avg_duration: expect.stringMatching(/^\d+\.\d{2}s$/) });
    expect(read.body.last_run_at).toBe(small.started_at);

    const listed = await api.get<{ items: { id: string; status: string }[]; total: number; next_cursor: string | null }>(`/api/v1/workflows/${workflow.id}/executions`, {
      token: account.accessToken,
      query: { limit: 1 },
    });
    expect(listed.body.total).toBe(2);
    expect(listed.body.items.map((item) => item.id)).toEqual([small.id]);
    const next = await api.get<{ items: { id: string }[] }>(`/api/v1/workflows/${workflow.id}/executions`, {
      token: account.accessToken,
      query: { limit: 1, cursor: listed.body.next_cursor ?? '' },
    });
    expect(next.body.items.map((item) => item.id)).toEqual([big.id]);
    const completedOnly = await api.get<{ total: number }>(`/api/v1/workflows/${workflow.id}/executions`, { token: account.accessToken, query: { status: 'failed' } });
    expect(completedOnly.body.total).toBe(0);
  });

  it('emit workflow.execution.started, completed and failed to webhooks', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const hook = await api.post('/api/v1/webhooks', {
      token: account.accessToken,
      json: { url: `${receiver.url}/events`, events: ['workflow.execution.started', 'workflow.execution.completed', 'workflow.execution.failed'] },
    });
    expect(hook.status).toBe(201);
    const workflow = await createWorkflow(api, account, { name: 'Events', nodes: [{ id: 'a', type: 'condition', config: { rules: [{ if: 'true', goto: 'b' }] } }, { id: 'b', type: 'condition', config: { rules: [] } }], edges: [{ source: 'a', target: 'b' }] });
    const run = await runSync(api, account, workflow.id);
    const deadline = Date.now() + 15_000;
    const events = () =>
      receiver.received
        .filter((request) => request.path === '/hooks/events' && request.body.includes(run.id))
        .map((request) => JSON.parse(request.body) as { type: string; tenant_id: string; data: Record<string, unknown> });
    while (events().length < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    const byType = Object.fromEntries(events().map((event) => [event.type, event]));
    expect(byType['workflow.execution.started']).toMatchObject({ tenant_id: account.tenantId, data: { execution_id: run.id, workflow_id: workflow.id, status: 'running' } });
    expect(byType['workflow.execution.completed']).toMatchObject({ tenant_id: account.tenantId, data: { execution_id: run.id, workflow_id: workflow.id, status: 'completed', duration_ms: run.duration_ms } });

    const failing = await createWorkflow(api, account, { name: 'Fails', nodes: [{ id: 'bad', type: 'condition', config: { rules: [{ if: 'input.missing.key == 1', goto: 'bad2' }] } }, { id: 'bad2', type: 'condition', config: { rules: [] } }], edges: [] });
    const failed = await runSync(api, account, failing.id);
    expect(failed.status).toBe('failed');
    const failedEvent = () => receiver.received.find((request) => request.path === '/hooks/events' && request.body.includes(failed.id) && request.body.includes('workflow.execution.failed'));
    const until = Date.now() + 15_000;
    while (!failedEvent() && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 50));
    const event = JSON.parse(failedEvent()?.body ?? '{}') as { data: Record<string, unknown> };
    expect(event.data).toEqual({ execution_id: failed.id, workflow_id: failing.id, status: 'failed', duration_ms: failed.duration_ms, error: { node_id: 'bad', message: expect.stringMatching(/^rule 1: /) } });
  });
});
