import { verifyWebhook, type AgentPlatformClient, type Execution, type operations, type WebhookEvent } from '@agent-platform/client';
import { startReceiver, type Receiver } from '@agent-platform/kit/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Api, ISO_MS, id, newAccount } from './harness/client.js';
import { expectError, expectStatus, statusOf } from './harness/results.js';
import { activate, createWorkflow, finished, nodeStatuses, runSync } from './harness/workflows.js';

let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver();
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
  return JSON.parse(JSON.stringify(BRANCHING).replaceAll('RECEIVER', receiver.url('/hooks'))) as typeof BRANCHING;
}

const workflowPath = (workflow_id: string) => ({ params: { path: { workflow_id } } });

function execute(client: AgentPlatformClient, workflowId: string, body: { input?: Record<string, unknown>; async?: boolean }) {
  return client.POST('/api/v1/workflows/{workflow_id}/execute', { ...workflowPath(workflowId), body });
}

describe('workflows', () => {
  it('are created as drafts, read with their graph and statistics, listed, updated and deleted', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const { client } = account;
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
      version: 1,
      created_at: expect.stringMatching(ISO_MS),
      updated_at: expect.stringMatching(ISO_MS),
    });
    const path = workflowPath(workflow.id);

    expect(expectStatus(await client.GET('/api/v1/workflows/{workflow_id}', path))).toEqual(workflow);

    const listed = await client.GET('/api/v1/workflows');
    expect(listed.data).toMatchObject({ total: 1, page: 1, per_page: 20, items: [{ id: workflow.id, name: 'Route orders', status: 'draft', trigger_type: 'webhook', last_run_at: null }] });

    const renamed = expectStatus(
      await client.PUT('/api/v1/workflows/{workflow_id}', {
        ...path,
        body: {
          name: 'Manual routing',
          nodes: [{ id: 'only', type: 'condition', config: { rules: [{ else: 'only2' }] } }, { id: 'only2', type: 'integration', config: { service: 'http', url: receiver.url('/hooks') } }],
          edges: [],
        },
      }),
    );
    expect(renamed).toMatchObject({ id: workflow.id, name: 'Manual routing', status: 'draft', trigger_type: 'manual', webhook_url: expect.stringMatching(new RegExp(`/hooks/${workflow.id}$`)) });
    expect(renamed.updated_at >= workflow.updated_at).toBe(true);

    expect(expectStatus(await client.DELETE('/api/v1/workflows/{workflow_id}', path))).toEqual({ success: true, message: expect.any(String) });
    expect(await statusOf(client.GET('/api/v1/workflows/{workflow_id}', path))).toBe(404);
  });

  it('move through draft, active and paused as decisions §7 says, idempotently', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const { client } = account;
    const workflow = await createWorkflow(api, account, { name: 'Lifecycle', nodes: [], edges: [] });
    const step = (operation: 'pause' | 'resume') => client.POST(`/api/v1/workflows/{workflow_id}/${operation}`, workflowPath(workflow.id));

    expect(expectStatus(await step('resume')).status).toBe('active');
    expect(expectStatus(await step('resume'))).toMatchObject({ id: workflow.id, status: 'active', updated_at: expect.stringMatching(ISO_MS) });
    expect(expectStatus(await step('pause')).status).toBe('paused');
    expect(expectStatus(await step('pause')).status).toBe('paused');

    // A paused workflow does not run by hand; PUT keeps the status.
    expectError(await execute(client, workflow.id, {}), 409, 'conflict');
    const put = await client.PUT('/api/v1/workflows/{workflow_id}', { ...workflowPath(workflow.id), body: { description: 'still paused' } });
    expect(expectStatus(put).status).toBe('paused');

    // A draft can be paused too, and runs by hand while draft.
    const draft = await createWorkflow(api, account, { name: 'Draft', nodes: [], edges: [] });
    const ran = await runSync(api, account, draft.id);
    expect(ran.status).toBe('completed');
    expect(expectStatus(await client.POST('/api/v1/workflows/{workflow_id}/pause', workflowPath(draft.id))).status).toBe('paused');
  });

  it('execute asynchronously (202) and synchronously (200), branch by CEL, and keep statistics and last_run_at', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const { client } = account;
    const workflow = await createWorkflow(api, account, branching());
    await activate(api, account, workflow.id);
    const before = receiver.requests.length;

    const accepted = expectStatus(await execute(client, workflow.id, { input: { id: 'o-1', amount: 250 } }), 202);
    expect(accepted).toEqual({ execution_id: expect.stringMatching(id('exe')), workflow_id: workflow.id, status: 'running', started_at: expect.stringMatching(ISO_MS) });
    const big = await finished(api, account, workflow.id, accepted.execution_id);
    expect(big).toMatchObject({ id: accepted.execution_id, execution_id: accepted.execution_id, status: 'completed', trigger: 'manual', input: { id: 'o-1', amount: 250 }, error: null });
    expect(nodeStatuses(big)).toEqual({ start: 'completed', check: 'completed', review: 'completed', ship: 'skipped' });
    expect(big.node_executions.find((node) => node.node_id === 'check')?.output).toEqual({ rule: 0, target: 'review' });
    expect(big.output).toMatchObject({ status: 200, body: { ok: true } });
    expect(big.duration_ms).toBeGreaterThanOrEqual(0);
    expect(big.completed_at).toMatch(ISO_MS);

    const small: Execution = await runSync(api, account, workflow.id, { id: 'o-2', amount: 5 });
    expect(small.status).toBe('completed');
    expect(nodeStatuses(small)).toEqual({ start: 'completed', check: 'completed', review: 'skipped', ship: 'completed' });
    for (const node of small.node_executions.filter((entry) => entry.status === 'completed')) {
      expect(node).toMatchObject({ started_at: expect.stringMatching(ISO_MS), duration_ms: expect.any(Number), error: null });
    }

    const sent = receiver.requests.slice(before).map((request) => ({ path: request.path, body: JSON.parse(request.body) as unknown }));
    expect(sent).toEqual(expect.arrayContaining([{ path: '/hooks/review', body: { order: 'o-1', kind: 'review' } }, { path: '/hooks/ship', body: { order: 'o-2' } }]));

    const read = expectStatus(await client.GET('/api/v1/workflows/{workflow_id}', workflowPath(workflow.id)));
    expect(read.statistics).toEqual({ total_runs: 2, success_rate: 1, avg_duration: expect.stringMatching(/^\d+\.\d{2}s$/) });
    expect(read.last_run_at).toBe(small.started_at);

    const executions = async (query: operations['listWorkflowExecutions']['parameters']['query']) =>
      expectStatus(await client.GET('/api/v1/workflows/{workflow_id}/executions', { params: { path: { workflow_id: workflow.id }, query } }));
    const listed = await executions({ limit: 1 });
    expect(listed.total).toBe(2);
    expect(listed.items.map((item) => item.id)).toEqual([small.id]);
    const next = await executions({ limit: 1, cursor: listed.next_cursor ?? '' });
    expect(next.items.map((item) => item.id)).toEqual([big.id]);
    expect((await executions({ status: 'failed' })).total).toBe(0);
  });

  it('emit workflow.execution.started, completed and failed to webhooks', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const hook = await account.client.POST('/api/v1/webhooks', {
      body: { url: receiver.url('/hooks/events'), events: ['workflow.execution.started', 'workflow.execution.completed', 'workflow.execution.failed'] },
    });
    const secret = expectStatus(hook, 201).signing_secret;
    const waitForEvents = async (executionId: string, count: number) => {
      const requests = await receiver.waitFor(count, { match: (request) => request.path === '/hooks/events' && request.body.includes(executionId), timeoutMs: 15_000 });
      const events: WebhookEvent[] = requests.map((request) => verifyWebhook(request.body, request.headers, secret));
      return Object.fromEntries(events.map((event) => [event.type, event]));
    };

    const workflow = await createWorkflow(api, account, { name: 'Events', nodes: [{ id: 'a', type: 'condition', config: { rules: [{ if: 'true', goto: 'b' }] } }, { id: 'b', type: 'condition', config: { rules: [] } }], edges: [{ source: 'a', target: 'b' }] });
    const run = await runSync(api, account, workflow.id);
    const byType = await waitForEvents(run.id, 2);
    expect(byType['workflow.execution.started']).toMatchObject({ tenant_id: account.tenantId, data: { execution_id: run.id, workflow_id: workflow.id, status: 'running' } });
    expect(byType['workflow.execution.completed']).toMatchObject({ tenant_id: account.tenantId, data: { execution_id: run.id, workflow_id: workflow.id, status: 'completed', duration_ms: run.duration_ms } });

    const failing = await createWorkflow(api, account, { name: 'Fails', nodes: [{ id: 'bad', type: 'condition', config: { rules: [{ if: 'input.missing.key == 1', goto: 'bad2' }] } }, { id: 'bad2', type: 'condition', config: { rules: [] } }], edges: [] });
    const failed = await runSync(api, account, failing.id);
    expect(failed.status).toBe('failed');
    const failedEvents = await waitForEvents(failed.id, 2);
    expect(failedEvents['workflow.execution.failed']?.data).toEqual({
      execution_id: failed.id,
      workflow_id: failing.id,
      status: 'failed',
      duration_ms: failed.duration_ms,
      error: { node_id: 'bad', message: expect.stringMatching(/^rule 1: /) },
    });
  });
});
