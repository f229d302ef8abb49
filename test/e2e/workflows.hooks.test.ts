import { describe, expect, it } from 'vitest';
import { Api, id, newAccount } from './harness/client.js';
import { expectStatus, statusOf } from './harness/results.js';
import { activate, createWorkflow, finished, hookPath } from './harness/workflows.js';

// Inbound webhooks (/hooks/…) are the workflows' own addresses, called by third parties with any
// body; the REST contract does not describe them, so they are called raw. The REST calls are typed.

const GRAPH = {
  nodes: [
    { id: 'in', type: 'webhook', config: { path: '/orders' } },
    {
      id: 'route',
      type: 'condition',
      config: { rules: [{ if: 'request.headers["x-kind"] == "rush" && request.query.priority == "high" && input.total > 10', goto: 'rush' }, { else: 'normal' }] },
    },
    { id: 'rush', type: 'condition', config: { rules: [] } },
    { id: 'normal', type: 'condition', config: { rules: [] } },
  ],
  edges: [
    { source: 'in', target: 'route' },
    { source: 'route', target: 'rush' },
    { source: 'route', target: 'normal' },
  ],
};

describe('inbound webhooks (/hooks)', () => {
  it('start an execution of an active workflow with the body as input and the query and headers as request', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const workflow = await createWorkflow(api, account, { name: 'Inbound', ...GRAPH });
    const path = hookPath(workflow);
    expect(path).toBe(`/hooks/${workflow.id}/orders`);

    // Draft: the address answers nothing.
    expect((await api.post(path, { json: { total: 20 } })).status).toBe(404);
    await activate(api, account, workflow.id);

    const accepted = await api.post<{ execution_id: string }>(`${path}?priority=high`, { json: { total: 20 }, headers: { 'x-kind': 'rush' } });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(202);
    expect(accepted.body).toMatchObject({ execution_id: expect.stringMatching(id('exe')) });
    expect(accepted.headers.get('x-ratelimit-limit')).not.toBeNull();
    const run = await finished(api, account, workflow.id, accepted.body.execution_id);
    expect(run).toMatchObject({ status: 'completed', trigger: 'webhook', input: { total: 20 } });
    expect(run.node_executions.find((node) => node.node_id === 'route')?.output).toEqual({ rule: 0, target: 'rush' });

    // An empty body is {}.
    const empty = await api.post<{ execution_id: string }>(path, {});
    expect(empty.status).toBe(202);
    expect((await finished(api, account, workflow.id, empty.body.execution_id)).input).toEqual({});
  });

  it('answer 404 for other methods, paths, unknown or paused workflows; 400 for a body that is not JSON; 413 over the limit', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const workflow = await createWorkflow(api, account, { name: 'Inbound errors', ...GRAPH });
    await activate(api, account, workflow.id);
    const path = hookPath(workflow);

    const notFound = async (method: string, url: string) => {
      const response = await api.request(method, url, method === 'POST' ? { json: {} } : {});
      expect(response.status, `${method} ${url}`).toBe(404);
      expect(response.body).toMatchObject({ error: 'not_found' });
    };
    await notFound('GET', path);
    await notFound('PUT', path);
    await notFound('POST', `/hooks/${workflow.id}/other`);
    await notFound('POST', `/hooks/${workflow.id}`);
    await notFound('POST', '/hooks/wf_01JD0000000000000000000000/orders');
    await notFound('POST', '/hooks/not-an-id');

    const malformed = await api.post(path, { raw: '{"total":', contentType: 'application/json' });
    expect(malformed.status).toBe(400);
    expect(malformed.body).toMatchObject({ error: 'invalid_request' });
    const huge = await api.post(path, { raw: JSON.stringify({ blob: 'x'.repeat(1_100_000) }), contentType: 'application/json' });
    expect(huge.status).toBe(413);
    expect(huge.body).toMatchObject({ error: 'payload_too_large' });

    expectStatus(await account.client.POST('/api/v1/workflows/{workflow_id}/pause', { params: { path: { workflow_id: workflow.id } } }));
    // The gateway may remember the owner for a few seconds; the runner itself refuses a paused workflow.
    await notFound('POST', path);
  });

  it("count against the owning tenant's plan limit (429 with Retry-After)", async () => {
    const api = new Api();
    const account = await newAccount(api);
    const workflow = await createWorkflow(api, account, { name: 'Limited', nodes: [{ id: 'in', type: 'webhook', config: {} }], edges: [] });
    await activate(api, account, workflow.id);
    const path = hookPath(workflow);
    let limited: Awaited<ReturnType<typeof api.post>> | undefined;
    for (let sent = 0; sent < 1_100 && !limited; sent += 1) {
      const response = await api.post(path, { json: { n: sent } });
      if (response.status === 429) limited = response;
      else expect(response.status).toBe(202);
    }
    expect(limited?.body).toMatchObject({ error: 'rate_limit_exceeded', retry_after: expect.any(Number) });
    expect(limited?.headers.get('retry-after')).not.toBeNull();
    // The tenant's API calls share the budget.
    expect(await statusOf(account.client.GET('/api/v1/workflows'))).toBe(429);
  });
});
