import type { RequestBody, WorkflowVersion, WorkflowVersionSummary } from '@agent-platform/client';
import { describe, expect, it } from 'vitest';
import { Api, ISO_MS, newAccount, newApiKey } from './harness/client.js';
import { expectError, expectStatus } from './harness/results.js';
import { createWorkflow, runSync } from './harness/workflows.js';

const condition = (id: string) => ({ id, type: 'condition', config: { rules: [] } });
const workflowPath = (workflow_id: string) => ({ params: { path: { workflow_id } } });
const versionPath = (workflow_id: string, version: number) => ({ params: { path: { workflow_id, version } } });

describe('workflow versions (decisions §13.1)', () => {
  it('are made by create, by changes of the graph and by restore, listed newest first by page and read with their graphs', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const { client } = account;
    const workflow = await createWorkflow(api, account, { name: 'Versions', nodes: [{ id: 'in', type: 'webhook', config: { path: '/in' } }, condition('first')], edges: [{ source: 'in', target: 'first' }] });
    expect(workflow.version).toBe(1);
    const path = workflowPath(workflow.id);
    const put = async (body: RequestBody<'/api/v1/workflows/{workflow_id}', 'put'>) => expectStatus(await client.PUT('/api/v1/workflows/{workflow_id}', { ...path, body }));

    expect((await put({ nodes: [condition('second')], edges: [] })).version).toBe(2);
    expect((await put({ name: 'Renamed' })).version).toBe(2);
    expect((await put({ nodes: [condition('second')] })).version).toBe(2);
    expect((await put({ nodes: [condition('third')] })).version).toBe(3);

    const page = async (query: { page: number; per_page: number }) =>
      expectStatus(await client.GET('/api/v1/workflows/{workflow_id}/versions', { params: { path: { workflow_id: workflow.id }, query } }));
    const first = await page({ page: 1, per_page: 2 });
    expect(first).toEqual({
      items: [
        { version: 3, created_at: expect.stringMatching(ISO_MS), created_by: account.userId },
        { version: 2, created_at: expect.stringMatching(ISO_MS), created_by: account.userId },
      ] satisfies WorkflowVersionSummary[],
      total: 3,
      page: 1,
      per_page: 2,
    });
    expect((await page({ page: 2, per_page: 2 })).items.map((item) => item.version)).toEqual([1]);

    const one: WorkflowVersion = expectStatus(await client.GET('/api/v1/workflows/{workflow_id}/versions/{version}', versionPath(workflow.id, 1)));
    expect(one).toEqual({ version: 1, created_at: workflow.created_at, created_by: account.userId, nodes: workflow.nodes, edges: workflow.edges });

    const restored = expectStatus(await client.POST('/api/v1/workflows/{workflow_id}/versions/{version}/restore', versionPath(workflow.id, 1)));
    expect(restored).toMatchObject({ id: workflow.id, name: 'Renamed', version: 4, trigger_type: 'webhook', nodes: workflow.nodes, edges: workflow.edges });
    expect(restored.webhook_url).toBe(workflow.webhook_url);
    expect(expectStatus(await client.GET('/api/v1/workflows/{workflow_id}', path)).version).toBe(4);
    expect(expectStatus(await client.GET('/api/v1/workflows')).items[0]).toMatchObject({ id: workflow.id, version: 4 });
    const four = expectStatus(await client.GET('/api/v1/workflows/{workflow_id}/versions/{version}', versionPath(workflow.id, 4)));
    expect({ nodes: four.nodes, edges: four.edges }).toEqual({ nodes: one.nodes, edges: one.edges });
  });

  it('are recorded on executions, full and summarised', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const workflow = await createWorkflow(api, account, { name: 'Runs', nodes: [condition('a')], edges: [] });
    const before = await runSync(api, account, workflow.id);
    expect(before.workflow_version).toBe(1);
    expectStatus(await account.client.PUT('/api/v1/workflows/{workflow_id}', { ...workflowPath(workflow.id), body: { nodes: [condition('b')] } }));
    const after = await runSync(api, account, workflow.id);
    expect(after).toMatchObject({ workflow_version: 2, node_executions: [{ node_id: 'b', status: 'completed' }] });
    const listed = expectStatus(await account.client.GET('/api/v1/workflows/{workflow_id}/executions', workflowPath(workflow.id)));
    expect(listed.items.map((item) => [item.id, item.workflow_version])).toEqual([
      [after.id, 2],
      [before.id, 1],
    ]);
    const read = expectStatus(await account.client.GET('/api/v1/workflows/{workflow_id}/executions/{execution_id}', { params: { path: { workflow_id: workflow.id, execution_id: before.id } } }));
    expect(read).toMatchObject({ workflow_version: 1, node_executions: [{ node_id: 'a' }] });
  });

  it('answer 400 for a version that is not a number, 422 for one below 1 and 404 for one that does not exist', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const workflow = await createWorkflow(api, account, { name: 'Bad numbers', nodes: [], edges: [] });
    const auth = { token: account.accessToken };
    // Raw: the typed client only sends numbers.
    expectError(await api.get(`/api/v1/workflows/${workflow.id}/versions/one`, auth), 400, 'invalid_request', ['version']);
    expectError(await api.post(`/api/v1/workflows/${workflow.id}/versions/1.5/restore`, auth), 400, 'invalid_request', ['version']);
    expectError(await api.get(`/api/v1/workflows/${workflow.id}/versions/0`, auth), 422, 'validation_error', ['version']);
    expectError(await api.get(`/api/v1/workflows/${workflow.id}/versions/-1`, auth), 422, 'validation_error', ['version']);
    expectError(await account.client.GET('/api/v1/workflows/{workflow_id}/versions/{version}', versionPath(workflow.id, 2)), 404, 'not_found');
    expectError(await account.client.POST('/api/v1/workflows/{workflow_id}/versions/{version}/restore', versionPath(workflow.id, 2)), 404, 'not_found');
    expectError(await account.client.GET('/api/v1/workflows/{workflow_id}/versions', { params: { path: { workflow_id: workflow.id }, query: { per_page: 101 } } }), 422, 'validation_error', ['per_page']);
  });
});

describe('agent references checked at save (decisions §13.2)', () => {
  it('refuse an agent of another tenant with 422 naming each node, on create, update and restore', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const other = await newAccount(api);
    const mine = expectStatus(await account.client.POST('/api/v1/agents', { body: { name: 'Mine', type: 'assistant' } }), 201);
    const theirs = expectStatus(await other.client.POST('/api/v1/agents', { body: { name: 'Theirs', type: 'assistant' } }), 201);
    const ask = (id: string, agentId: string) => ({ id, type: 'agent', config: { agent_id: agentId } });

    const refused = await account.client.POST('/api/v1/workflows', { body: { name: 'Borrowing', nodes: [ask('a', mine.id), ask('b', theirs.id), ask('c', theirs.id)], edges: [] } });
    expect(expectError(refused, 422, 'validation_error').details).toEqual([
      { field: 'nodes[1].config.agent_id', message: 'is not an agent of this tenant' },
      { field: 'nodes[2].config.agent_id', message: 'is not an agent of this tenant' },
    ]);

    const workflow = await createWorkflow(api, account, { name: 'Own', nodes: [ask('a', mine.id)], edges: [] });
    const path = workflowPath(workflow.id);
    expectError(await account.client.PUT('/api/v1/workflows/{workflow_id}', { ...path, body: { nodes: [ask('a', theirs.id)] } }), 422, 'validation_error', ['nodes[0].config.agent_id']);
    expect(expectStatus(await account.client.GET('/api/v1/workflows/{workflow_id}', path)).version).toBe(1);

    expectStatus(await account.client.PUT('/api/v1/workflows/{workflow_id}', { ...path, body: { nodes: [condition('none')] } }));
    expectStatus(await account.client.DELETE('/api/v1/agents/{agent_id}', { params: { path: { agent_id: mine.id } } }));
    expectError(await account.client.POST('/api/v1/workflows/{workflow_id}/versions/{version}/restore', versionPath(workflow.id, 1)), 422, 'validation_error', ['nodes[0].config.agent_id']);
    expect(expectStatus(await account.client.GET('/api/v1/workflows/{workflow_id}', path)).version).toBe(2);
  });

  it('let a key that may chat (agents:write) name its own agents without agents:read; one that may not chat saves no agent node (403)', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const agent = expectStatus(await account.client.POST('/api/v1/agents', { body: { name: 'Helper', type: 'assistant' } }), 201);
    const body = { name: 'By key', nodes: [{ id: 'ask', type: 'agent' as const, config: { agent_id: agent.id } }], edges: [] };
    const key = await newApiKey(api, account, ['workflows:write', 'agents:write']);
    const created = await key.client.POST('/api/v1/workflows', { body });
    expect(expectStatus(created, 201)).toMatchObject({ version: 1, nodes: [{ id: 'ask', type: 'agent', config: { agent_id: agent.id } }] });
    // decisions §13.2: the node chats whenever the workflow runs, so saving it needs what chatting needs.
    const workflowsOnly = await newApiKey(api, account, ['workflows:write']);
    expect(expectError(await workflowsOnly.client.POST('/api/v1/workflows', { body }), 403, 'forbidden').message).toContain('agents:write');
  });
});
