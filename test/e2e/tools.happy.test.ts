import type { AgentPlatformClient, RequestBody, Tool } from '@agent-platform/client';
import { describe, expect, it } from 'vitest';
import { Api, ISO_MS, id, newAccount } from './harness/client.js';
import { expectError, expectStatus } from './harness/results.js';

const ARGUMENTS = { type: 'object', properties: { order_id: { type: 'string' } }, required: ['order_id'] };

async function createTool(client: AgentPlatformClient, body: Partial<RequestBody<'/api/v1/tools', 'post'>> = {}): Promise<Tool> {
  const tool: RequestBody<'/api/v1/tools', 'post'> = {
    name: 'lookup_order',
    description: 'Finds an order by its number.',
    type: 'http',
    // Loopback: both modes run with ALLOW_PRIVATE_NETWORK_URLS (the suites' receivers are local).
    config: { url: 'http://127.0.0.1:9/orders', headers: { authorization: 'Bearer sk-live-123' } },
    input_schema: ARGUMENTS,
    ...body,
  };
  return expectStatus(await client.POST('/api/v1/tools', { body: tool }), 201);
}

const toolPath = (tool_id: string) => ({ params: { path: { tool_id } } });

describe('tools', () => {
  it('are created, read, listed, replaced and deleted, header values never shown', async () => {
    const { client } = await newAccount(new Api());
    const created = await createTool(client);
    expect(created).toEqual({
      id: expect.stringMatching(id('tool')),
      name: 'lookup_order',
      description: 'Finds an order by its number.',
      type: 'http',
      config: { url: 'http://127.0.0.1:9/orders', method: 'POST', headers: { authorization: '***' } },
      input_schema: ARGUMENTS,
      requires_approval: false,
      created_at: expect.stringMatching(ISO_MS),
      updated_at: expect.stringMatching(ISO_MS),
    });
    expect(expectStatus(await client.GET('/api/v1/tools/{tool_id}', toolPath(created.id)))).toEqual(created);
    const second = await createTool(client, { name: 'refund_order' });
    const listed = expectStatus(await client.GET('/api/v1/tools', {}));
    expect(listed).toMatchObject({ total: 2, page: 1, per_page: 20 });
    expect(listed.items.map((tool) => tool.id)).toEqual([second.id, created.id]);

    // Sent back as read, with a change: the masked header keeps its value.
    const replaced = expectStatus(
      await client.PUT('/api/v1/tools/{tool_id}', {
        ...toolPath(created.id),
        body: { name: 'lookup_order', type: 'http', config: { ...created.config, method: 'GET' }, input_schema: ARGUMENTS, requires_approval: true },
      }),
    );
    expect(replaced).toMatchObject({ id: created.id, description: null, requires_approval: true, config: { method: 'GET', headers: { authorization: '***' } } });

    expectError(await client.POST('/api/v1/tools', { body: { name: 'refund_order', type: 'http', config: { url: 'http://127.0.0.1:9/x' }, input_schema: {} } }), 409, 'conflict');
    expect(expectStatus(await client.DELETE('/api/v1/tools/{tool_id}', toolPath(created.id)))).toMatchObject({ success: true });
    expectError(await client.GET('/api/v1/tools/{tool_id}', toolPath(created.id)), 404, 'not_found');
  });

  it('a workflow tool names a workflow of the tenant; an agent names its tools', async () => {
    const { client } = await newAccount(new Api());
    const workflow = expectStatus(
      await client.POST('/api/v1/workflows', {
        body: { name: 'Lookup', nodes: [{ id: 'call', type: 'integration', config: { service: 'http', url: 'http://127.0.0.1:9/x', method: 'GET' } }], edges: [] },
      }),
      201,
    );
    const tool = await createTool(client, { name: 'run_lookup', type: 'workflow', config: { workflow_id: workflow.id } });
    expect(tool.config).toEqual({ workflow_id: workflow.id });
    const other = await newAccount(new Api());
    expectError(
      await other.client.POST('/api/v1/tools', { body: { name: 'run_lookup', type: 'workflow', config: { workflow_id: workflow.id }, input_schema: ARGUMENTS } }),
      422,
      'validation_error',
      ['config.workflow_id'],
    );

    const agent = expectStatus(await client.POST('/api/v1/agents', { body: { name: 'Support', type: 'support', tools: [tool.id] } }), 201);
    expect(agent.tools).toEqual([tool.id]);
    expectError(await other.client.POST('/api/v1/agents', { body: { name: 'Support', type: 'support', tools: [tool.id] } }), 422, 'validation_error', ['tools[0]']);
    expectStatus(await client.DELETE('/api/v1/tools/{tool_id}', toolPath(tool.id)));
    expect(expectStatus(await client.GET('/api/v1/agents/{agent_id}', { params: { path: { agent_id: agent.id } } })).tools).toEqual([]);
  });
});
