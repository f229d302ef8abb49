import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { as, expectError, newAccount, startHarness, type Harness } from './support/harness.js';

// `/hooks` in the all-in-one mode: the gateway counts the request against the owner's plan, then
// hands it to the runner's ingress in this process (the distributed mode's proxy is e2e-tested).
let h: Harness;
let hookPath: string;
beforeAll(async () => {
  h = await startHarness();
  const account = await newAccount(h.app);
  const created = await as(h.app, account.token, {
    method: 'POST',
    url: '/api/v1/workflows',
    payload: { name: 'Inbound', nodes: [{ id: 'in', type: 'webhook', config: { path: '/orders' } }], edges: [] },
  });
  expect(created.statusCode, created.body).toBe(201);
  const workflow = created.json<{ id: string; webhook_url: string }>();
  const resumed = await as(h.app, account.token, { method: 'POST', url: `/api/v1/workflows/${workflow.id}/resume` });
  expect(resumed.statusCode, resumed.body).toBe(200);
  hookPath = new URL(workflow.webhook_url).pathname;
});
afterAll(async () => {
  await h.close();
});

const post = (url: string, payload: string) => h.app.inject({ method: 'POST', url, payload, headers: { 'content-type': 'application/json', 'x-request-id': 'hook-1' } });

describe('/hooks through the in-process ingress', () => {
  it("answers with the ingress's answer, counted against the owner's plan", async () => {
    const accepted = await post(`${hookPath}?source=shop`, '{"order":1}');
    expect(accepted.statusCode, accepted.body).toBe(202);
    expect(accepted.json()).toEqual({ execution_id: expect.stringMatching(/^exe_/) as unknown, workflow_id: expect.stringMatching(/^wf_/) as unknown, status: 'running' });
    expect(accepted.headers['content-type']).toMatch(/^application\/json/);
    expect(accepted.headers['x-ratelimit-limit']).toBeDefined();
    expect(accepted.headers['x-request-id']).toBe('hook-1');
    // The body is the ingress's to judge: not JSON is its 400, in the API's error format.
    expectError(await post(hookPath, '{not json'), 400, 'invalid_request');
  });

  it('is 503 service_unavailable while the ingress refuses, and serves again after', async () => {
    h.setIngressDown(true);
    try {
      const down = await post(hookPath, '{}');
      expect(expectError(down, 503, 'service_unavailable').message).toBe('A dependency is unavailable; retry shortly.');
    } finally {
      h.setIngressDown(false);
    }
    expect((await post(hookPath, '{}')).statusCode).toBe(202);
  });
});
