import { describe, expect, it } from 'vitest';
import { Api, newAccount, type ApiResponse } from './harness/client.js';
import { createWorkflow } from './harness/workflows.js';

function expectError(response: ApiResponse, status: number, code: string, fields?: string[]): void {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  expect(response.body).toMatchObject({ error: code, message: expect.any(String) });
  if (fields) expect((response.body.details as { field: string }[]).map((detail) => detail.field).sort()).toEqual([...fields].sort());
}

const node = (id: string, type: string, config: Record<string, unknown> = {}) => ({ id, type, config });

describe('workflow validation (decisions §7), each problem named', () => {
  const cases: { name: string; body: Record<string, unknown>; fields: string[] }[] = [
    { name: 'a blank name', body: { name: ' ', nodes: [], edges: [] }, fields: ['name'] },
    { name: 'duplicate node ids', body: { name: 'x', nodes: [node('a', 'condition', { rules: [] }), node('a', 'condition', { rules: [] })], edges: [] }, fields: ['nodes[1].id'] },
    { name: 'an unknown node type', body: { name: 'x', nodes: [node('a', 'teleport')], edges: [] }, fields: ['nodes[0].type'] },
    { name: 'an unknown config key', body: { name: 'x', nodes: [node('a', 'webhook', { path: '/a', colour: 'red' })], edges: [] }, fields: ['nodes[0].config.colour'] },
    { name: 'a webhook path without a leading slash', body: { name: 'x', nodes: [node('a', 'condition', { rules: [] }), node('b', 'condition', { rules: [] }), node('h', 'webhook', { path: 'orders' })], edges: [] }, fields: ['nodes[2].config.path'] },
    { name: 'an edge to a missing node', body: { name: 'x', nodes: [node('a', 'condition', { rules: [] })], edges: [{ source: 'a', target: 'ghost' }] }, fields: ['edges[0].target'] },
    { name: 'a cycle', body: { name: 'x', nodes: [node('a', 'condition', { rules: [] }), node('b', 'condition', { rules: [] })], edges: [{ source: 'a', target: 'b' }, { source: 'b', target: 'a' }] }, fields: ['edges'] },
    { name: 'two trigger nodes', body: { name: 'x', nodes: [node('a', 'webhook'), node('b', 'schedule', { cron: '* * * * *' })], edges: [] }, fields: ['nodes[1].type'] },
    { name: 'a goto to a missing node', body: { name: 'x', nodes: [node('a', 'condition', { rules: [{ if: 'true', goto: 'nowhere' }] })], edges: [] }, fields: ['nodes[0].config.rules[0].goto'] },
    { name: 'CEL that does not compile', body: { name: 'x', nodes: [node('a', 'condition', { rules: [{ if: 'input.amount >', goto: 'b' }] }), node('b', 'condition', { rules: [] })], edges: [] }, fields: ['nodes[0].config.rules[0].if'] },
    { name: 'an unknown integration service', body: { name: 'x', nodes: [node('a', 'integration', { service: 'fax' })], edges: [] }, fields: ['nodes[0].config.service'] },
    { name: 'a schedule that is not cron', body: { name: 'x', nodes: [node('s', 'schedule', { cron: 'every day' })], edges: [] }, fields: ['nodes[0].config.cron'] },
    { name: 'an agent node without agent_id', body: { name: 'x', nodes: [node('a', 'agent')], edges: [] }, fields: ['nodes[0].config.agent_id'] },
  ];

  for (const { name, body, fields } of cases) {
    it(`refuses ${name}`, async () => {
      const api = new Api();
      const account = await newAccount(api);
      expectError(await api.post('/api/v1/workflows', { token: account.accessToken, json: body }), 422, 'validation_error', fields);
    });
  }

  it('accepts 200 nodes and refuses 201', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const nodes = (count: number) => Array.from({ length: count }, (_, index) => node(`n${index}`, 'condition', { rules: [] }));
    expect((await api.post('/api/v1/workflows', { token: account.accessToken, json: { name: 'big', nodes: nodes(200), edges: [] } })).status).toBe(201);
    expectError(await api.post('/api/v1/workflows', { token: account.accessToken, json: { name: 'too big', nodes: nodes(201), edges: [] } }), 422, 'validation_error', ['nodes']);
  });

  it('validates PUT the same way and keeps the workflow as it was', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const workflow = await createWorkflow(api, account, { name: 'Keep', nodes: [node('a', 'condition', { rules: [] })], edges: [] });
    expectError(await api.request('PUT', `/api/v1/workflows/${workflow.id}`, { token: account.accessToken, json: { nodes: [node('a', 'nope')] } }), 422, 'validation_error', ['nodes[0].type']);
    const read = await api.get<{ nodes: unknown[] }>(`/api/v1/workflows/${workflow.id}`, { token: account.accessToken });
    expect(read.body.nodes).toEqual([node('a', 'condition', { rules: [] })]);
  });

  it('answers 400 for bodies and queries of the wrong shape, 422 for values out of range', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const workflow = await createWorkflow(api, account, { name: 'Shapes', nodes: [], edges: [] });
    expectError(await api.post('/api/v1/workflows', { token: account.accessToken, raw: '{"name":', contentType: 'application/json' }), 400, 'invalid_request');
    expectError(await api.post('/api/v1/workflows', { token: account.accessToken, json: { name: 'x', nodes: 'many' } }), 422, 'validation_error', ['nodes']);
    expectError(await api.post(`/api/v1/workflows/${workflow.id}/execute`, { token: account.accessToken, json: { input: [1, 2] } }), 422, 'validation_error', ['input']);
    expectError(await api.get(`/api/v1/workflows/${workflow.id}/executions`, { token: account.accessToken, query: { limit: 0 } }), 422, 'validation_error', ['limit']);
    expectError(await api.get(`/api/v1/workflows/${workflow.id}/executions`, { token: account.accessToken, query: { cursor: 'not-a-cursor' } }), 422, 'validation_error', ['cursor']);
    expectError(await api.get(`/api/v1/workflows/${workflow.id}/executions`, { token: account.accessToken, query: { status: 'sleeping' } }), 422, 'validation_error', ['status']);
  });

  it("never shows one tenant another tenant's workflows or executions: 404 on every route", async () => {
    const api = new Api();
    const owner = await newAccount(api);
    const stranger = await newAccount(api);
    const workflow = await createWorkflow(api, owner, { name: 'Private', nodes: [], edges: [] });
    const run = await api.post<{ execution_id: string }>(`/api/v1/workflows/${workflow.id}/execute`, { token: owner.accessToken, json: {} });
    const executionId = run.body.execution_id;
    const w = `/api/v1/workflows/${workflow.id}`;
    const attempts: [string, string, unknown?][] = [
      ['GET', w],
      ['PUT', w, { name: 'mine now' }],
      ['DELETE', w],
      ['POST', `${w}/pause`],
      ['POST', `${w}/resume`],
      ['POST', `${w}/execute`, {}],
      ['GET', `${w}/executions`],
      ['GET', `${w}/executions/${executionId}`],
      ['POST', `${w}/executions/${executionId}/cancel`],
      ['POST', `${w}/executions/${executionId}/retry`],
    ];
    for (const [method, path, json] of attempts) {
      expectError(await api.request(method, path, { token: stranger.accessToken, ...(json === undefined ? {} : { json }) }), 404, 'not_found');
    }
    // An execution id under another of the owner's workflows is not found either.
    const other = await createWorkflow(api, owner, { name: 'Other', nodes: [], edges: [] });
    expectError(await api.get(`/api/v1/workflows/${other.id}/executions/${executionId}`, { token: owner.accessToken }), 404, 'not_found');
    const list = await api.get<{ total: number }>('/api/v1/workflows', { token: stranger.accessToken });
    expect(list.body.total).toBe(0);
    expect((await api.get(w, { token: owner.accessToken })).status).toBe(200);
  });
});
