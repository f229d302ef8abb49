import type { AgentPlatformClient } from '@agent-platform/client';
import { describe, expect, it } from 'vitest';
import { Api, newAccount } from './harness/client.js';
import { expectError, expectStatus, type CallResult } from './harness/results.js';
import { createWorkflow, type WorkflowInput } from './harness/workflows.js';

const node = (id: string, type: string, config: Record<string, unknown> = {}) => ({ id, type, config });

/** A call of every operation on one workflow and one of its executions. */
function everyOperation(client: AgentPlatformClient, workflowId: string, executionId: string): [string, () => Promise<CallResult>][] {
  const workflow = { params: { path: { workflow_id: workflowId } } };
  const execution = { params: { path: { workflow_id: workflowId, execution_id: executionId } } };
  const version = { params: { path: { workflow_id: workflowId, version: 1 } } };
  return [
    ['GET workflow', () => client.GET('/api/v1/workflows/{workflow_id}', workflow)],
    ['PUT workflow', () => client.PUT('/api/v1/workflows/{workflow_id}', { ...workflow, body: { name: 'mine now' } })],
    ['DELETE workflow', () => client.DELETE('/api/v1/workflows/{workflow_id}', workflow)],
    ['POST pause', () => client.POST('/api/v1/workflows/{workflow_id}/pause', workflow)],
    ['POST resume', () => client.POST('/api/v1/workflows/{workflow_id}/resume', workflow)],
    ['POST execute', () => client.POST('/api/v1/workflows/{workflow_id}/execute', { ...workflow, body: {} })],
    ['GET versions', () => client.GET('/api/v1/workflows/{workflow_id}/versions', workflow)],
    ['GET version', () => client.GET('/api/v1/workflows/{workflow_id}/versions/{version}', version)],
    ['POST restore', () => client.POST('/api/v1/workflows/{workflow_id}/versions/{version}/restore', version)],
    ['GET executions', () => client.GET('/api/v1/workflows/{workflow_id}/executions', workflow)],
    ['GET execution', () => client.GET('/api/v1/workflows/{workflow_id}/executions/{execution_id}', execution)],
    ['POST cancel', () => client.POST('/api/v1/workflows/{workflow_id}/executions/{execution_id}/cancel', execution)],
    ['POST retry', () => client.POST('/api/v1/workflows/{workflow_id}/executions/{execution_id}/retry', execution)],
  ];
}

describe('workflow validation (decisions §7), each problem named', () => {
  const cases: { name: string; body: WorkflowInput; fields: string[] }[] = [
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
      const { client } = await newAccount(new Api());
      expectError(await client.POST('/api/v1/workflows', { body }), 422, 'validation_error', fields);
    });
  }

  it('accepts 200 nodes and refuses 201', async () => {
    const { client } = await newAccount(new Api());
    const nodes = (count: number) => Array.from({ length: count }, (_, index) => node(`n${index}`, 'condition', { rules: [] }));
    expectStatus(await client.POST('/api/v1/workflows', { body: { name: 'big', nodes: nodes(200), edges: [] } }), 201);
    expectError(await client.POST('/api/v1/workflows', { body: { name: 'too big', nodes: nodes(201), edges: [] } }), 422, 'validation_error', ['nodes']);
  });

  it('validates PUT the same way and keeps the workflow as it was', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const workflow = await createWorkflow(api, account, { name: 'Keep', nodes: [node('a', 'condition', { rules: [] })], edges: [] });
    const path = { params: { path: { workflow_id: workflow.id } } };
    expectError(await account.client.PUT('/api/v1/workflows/{workflow_id}', { ...path, body: { nodes: [node('a', 'nope')] } }), 422, 'validation_error', ['nodes[0].type']);
    const read = expectStatus(await account.client.GET('/api/v1/workflows/{workflow_id}', path));
    expect(read.nodes).toEqual([node('a', 'condition', { rules: [] })]);
  });

  it('answers 400 for bodies and queries of the wrong shape, 422 for values out of range', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const workflow = await createWorkflow(api, account, { name: 'Shapes', nodes: [], edges: [] });
    const auth = { token: account.accessToken };
    const executions = (query: { limit?: number; cursor?: string }) =>
      account.client.GET('/api/v1/workflows/{workflow_id}/executions', { params: { path: { workflow_id: workflow.id }, query } });
    // Raw: a malformed body, and values of types or outside enums that the contract forbids.
    expectError(await api.post('/api/v1/workflows', { ...auth, raw: '{"name":', contentType: 'application/json' }), 400, 'invalid_request');
    expectError(await api.post('/api/v1/workflows', { ...auth, json: { name: 'x', nodes: 'many' } }), 422, 'validation_error', ['nodes']);
    expectError(await api.post(`/api/v1/workflows/${workflow.id}/execute`, { ...auth, json: { input: [1, 2] } }), 422, 'validation_error', ['input']);
    expectError(await api.get(`/api/v1/workflows/${workflow.id}/executions`, { ...auth, query: { status: 'sleeping' } }), 422, 'validation_error', ['status']);
    expectError(await executions({ limit: 0 }), 422, 'validation_error', ['limit']);
    expectError(await executions({ cursor: 'not-a-cursor' }), 422, 'validation_error', ['cursor']);
  });

  it("never shows one tenant another tenant's workflows or executions: 404 on every route", async () => {
    const api = new Api();
    const owner = await newAccount(api);
    const stranger = await newAccount(api);
    const workflow = await createWorkflow(api, owner, { name: 'Private', nodes: [], edges: [] });
    const run = await owner.client.POST('/api/v1/workflows/{workflow_id}/execute', { params: { path: { workflow_id: workflow.id } }, body: {} });
    const executionId = expectStatus(run, 202).execution_id;
    for (const [operation, call] of everyOperation(stranger.client, workflow.id, executionId)) {
      const result = await call();
      expect(result.response.status, operation).toBe(404);
      expectError(result, 404, 'not_found');
    }
    // An execution id under another of the owner's workflows is not found either.
    const other = await createWorkflow(api, owner, { name: 'Other', nodes: [], edges: [] });
    const elsewhere = { params: { path: { workflow_id: other.id, execution_id: executionId } } };
    expectError(await owner.client.GET('/api/v1/workflows/{workflow_id}/executions/{execution_id}', elsewhere), 404, 'not_found');
    expect(expectStatus(await stranger.client.GET('/api/v1/workflows')).total).toBe(0);
    expectStatus(await owner.client.GET('/api/v1/workflows/{workflow_id}', { params: { path: { workflow_id: workflow.id } } }));
  });
});
