import { PrincipalKind } from '@agent-platform/kit/grpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newAgent } from '../support/agents.js';
import { lastCall, principalOf } from '../support/calls.js';
import { as, ISO_MS, matching, newAccount, newApiKey, startHarness, type Harness } from '../support/harness.js';
import { ARGUMENTS_SCHEMA, httpTool, newTool, type ToolBody } from '../support/tools.js';

let h: Harness;
beforeAll(async () => {
  // http tools here point at loopback, which needs the development allowance.
  h = await startHarness({ ALLOW_PRIVATE_NETWORK_URLS: 'true' });
});
afterAll(async () => {
  await h.close();
});

const TOOL_ID = /^tool_[0-9A-HJKMNP-TV-Z]{26}$/;

describe('POST /tools', () => {
  it('answers 201 with every field, header values as "***", acting as the caller', async () => {
    const account = await newAccount(h.app);
    const created = await as(h.app, account.token, { method: 'POST', url: '/api/v1/tools', payload: httpTool({ requires_approval: true }) });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json<ToolBody>()).toEqual({
      id: matching(TOOL_ID),
      name: 'lookup_order',
      description: 'Finds an order by its number.',
      type: 'http',
      config: { url: 'http://127.0.0.1:9/orders', method: 'POST', headers: { authorization: '***' } },
      input_schema: ARGUMENTS_SCHEMA,
      requires_approval: true,
      created_at: matching(ISO_MS),
      updated_at: matching(ISO_MS),
    });
    expect(created.body).not.toContain('sk-live-123');
    expect(principalOf(lastCall(h.agentMemory, 'CreateTool'))).toMatchObject({ kind: PrincipalKind.KIND_USER, userId: account.userId, tenantId: account.tenantId });
  });

  it('creates a workflow tool naming a workflow of the tenant', async () => {
    const account = await newAccount(h.app);
    const workflow = await as(h.app, account.token, {
      method: 'POST',
      url: '/api/v1/workflows',
      payload: { name: 'Lookup', nodes: [{ id: 'call', type: 'integration', config: { service: 'http', url: 'http://127.0.0.1:9/x', method: 'GET' } }], edges: [] },
    });
    expect(workflow.statusCode, workflow.body).toBe(201);
    const workflowId = workflow.json<{ id: string }>().id;
    const created = await as(h.app, account.token, {
      method: 'POST',
      url: '/api/v1/tools',
      payload: { name: 'run_lookup', type: 'workflow', config: { workflow_id: workflowId }, input_schema: { type: 'object' } },
    });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json<ToolBody>()).toMatchObject({ type: 'workflow', config: { workflow_id: workflowId }, requires_approval: false, description: null });
  });

  it('accepts an API key with tools:write', async () => {
    const account = await newAccount(h.app);
    const key = await newApiKey(h.app, account, ['tools:write']);
    const created = await as(h.app, key.key, { method: 'POST', url: '/api/v1/tools', payload: httpTool() });
    expect(created.statusCode, created.body).toBe(201);
  });
});

describe('GET /tools', () => {
  it('lists the tenant\'s tools newest first, paged', async () => {
    const account = await newAccount(h.app);
    const ids: string[] = [];
    for (const name of ['first', 'second', 'third']) ids.push((await newTool(h.app, account.token, { name })).id);
    const page = await as(h.app, account.token, { method: 'GET', url: '/api/v1/tools', query: { per_page: '2' } });
    expect(page.statusCode, page.body).toBe(200);
    expect(page.json()).toMatchObject({ total: 3, page: 1, per_page: 2 });
    const next = await as(h.app, account.token, { method: 'GET', url: '/api/v1/tools', query: { per_page: '2', page: '2' } });
    const listed = [...page.json<{ items: ToolBody[] }>().items, ...next.json<{ items: ToolBody[] }>().items];
    expect(listed.map((tool) => tool.id)).toEqual([...ids].reverse());
    expect(listed.every((tool) => JSON.stringify(tool.config).includes('"***"'))).toBe(true);
  });
});

describe('GET, PUT, DELETE /tools/{tool_id}', () => {
  it('reads, replaces (keeping a header sent back as "***") and deletes a tool', async () => {
    const account = await newAccount(h.app);
    const tool = await newTool(h.app, account.token, { requires_approval: true });
    const url = `/api/v1/tools/${tool.id}`;
    const got = await as(h.app, account.token, { method: 'GET', url });
    expect(got.statusCode, got.body).toBe(200);
    expect(got.json()).toEqual(tool);

    // What was read, sent back with a change: the masked header keeps its value.
    const { id: _id, created_at: _created, updated_at: _updated, ...body } = got.json<ToolBody>();
    const replaced = await as(h.app, account.token, {
      method: 'PUT',
      url,
      payload: { ...body, description: undefined, requires_approval: undefined, config: { ...body.config, method: 'GET', headers: { authorization: '***', 'x-team': 'support' } } },
    });
    expect(replaced.statusCode, replaced.body).toBe(200);
    expect(replaced.json()).toMatchObject({
      id: tool.id,
      description: null,
      requires_approval: false,
      config: { method: 'GET', headers: { authorization: '***', 'x-team': '***' } },
      created_at: tool.created_at,
    });

    const deleted = await as(h.app, account.token, { method: 'DELETE', url });
    expect(deleted.statusCode, deleted.body).toBe(200);
    expect(deleted.json()).toEqual({ success: true, message: expect.any(String) as unknown });
    expect((await as(h.app, account.token, { method: 'GET', url })).statusCode).toBe(404);
  });
});

describe('agents and tools', () => {
  it('an agent names the tenant\'s tools; deleting a tool takes it off the agent', async () => {
    const account = await newAccount(h.app);
    const lookup = await newTool(h.app, account.token);
    const refund = await newTool(h.app, account.token, { name: 'refund' });
    const agent = await newAgent(h.app, account.token, { tools: [lookup.id, refund.id] });
    expect(agent.tools).toEqual([lookup.id, refund.id]);

    const patched = await as(h.app, account.token, { method: 'PATCH', url: `/api/v1/agents/${agent.id}`, payload: { tools: [refund.id] } });
    expect(patched.json<{ tools: string[] }>().tools).toEqual([refund.id]);
    await as(h.app, account.token, { method: 'DELETE', url: `/api/v1/tools/${refund.id}` });
    const read = await as(h.app, account.token, { method: 'GET', url: `/api/v1/agents/${agent.id}` });
    expect(read.json<{ tools: string[] }>().tools).toEqual([]);

    const replaced = await as(h.app, account.token, { method: 'PUT', url: `/api/v1/agents/${agent.id}`, payload: { name: 'Helper', type: 'support', tools: [lookup.id] } });
    expect(replaced.json<{ tools: string[] }>().tools).toEqual([lookup.id]);
  });
});
