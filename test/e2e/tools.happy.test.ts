import { streamToolCallDecision, verifyWebhook, type AgentPlatformClient, type ChatStreamEvent, type RequestBody, type Tool } from '@agent-platform/client';
import { startReceiver, type Receiver } from '@agent-platform/kit/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Api, ISO_MS, id, newAccount } from './harness/client.js';
import { ofTenant } from './harness/deliveries.js';
import { expectError, expectStatus } from './harness/results.js';

let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver((request) => (request.path.startsWith('/hooks') ? { status: 204 } : { json: { order: request.json ?? null, state: 'shipped' } }));
});
afterAll(() => receiver.close());

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

describe('agents that call their tools', () => {
  it('a turn calls an http tool; a gated one waits, its approval request reaches a webhook, and a streamed approval continues the turn', async () => {
    const account = await newAccount(new Api());
    const { client } = account;
    const webhook = expectStatus(await client.POST('/api/v1/webhooks', { body: { url: receiver.url('/hooks'), events: ['agent.tool_call.approval_requested'] } }), 201);
    const track = await createTool(client, { name: 'track_order', config: { url: receiver.url('/track') } });
    const refund = await createTool(client, { name: 'refund_order', config: { url: receiver.url('/refund') }, requires_approval: true });
    const agent = expectStatus(await client.POST('/api/v1/agents', { body: { name: 'Support', type: 'support', tools: [track.id, refund.id] } }), 201);
    const chat = (message: string, session_id?: string) =>
      client.POST('/api/v1/agents/{agent_id}/chat', { params: { path: { agent_id: agent.id } }, body: { message, ...(session_id ? { session_id } : {}) } });

    const tracked = expectStatus(await chat('track_order {"order_id": "A-1"}'));
    expect(tracked.status).toBe('completed');
    expect(tracked.tool_calls).toMatchObject([{ name: 'track_order', tool_id: track.id, status: 'completed', result: { order: { order_id: 'A-1' }, state: 'shipped' } }]);

    const paused = expectStatus(await chat('refund_order {"order_id": "A-1"}', tracked.session_id));
    expect(paused).toMatchObject({ status: 'awaiting_approval', tool_calls: [{ name: 'refund_order', status: 'awaiting_approval' }] });
    const callId = paused.tool_calls[0]!.id;
    expect(receiver.received('/refund')).toEqual([]);
    const [delivery] = await receiver.waitFor(1, { match: (request) => request.path === '/hooks' && ofTenant(account.tenantId)(request), timeoutMs: 15_000 });
    const event = verifyWebhook(delivery!.body, delivery!.headers, webhook.signing_secret);
    expect(event).toMatchObject({ type: 'agent.tool_call.approval_requested', data: { agent_id: agent.id, session_id: paused.session_id, call_id: callId, name: 'refund_order', arguments: { order_id: 'A-1' } } });

    const events: ChatStreamEvent[] = [];
    for await (const streamed of streamToolCallDecision(client, { agentId: agent.id, sessionId: paused.session_id, callId }, 'approve', { comment: 'refund approved' })) events.push(streamed);
    expect(events[0]).toEqual({ event: 'tool.result', data: { id: callId, status: 'completed', result: { order: { order_id: 'A-1' }, state: 'shipped' }, run_id: paused.run_id } });
    const completed = events.at(-1);
    expect(completed?.event).toBe('message.completed');
    expect(completed?.event === 'message.completed' && completed.data.tool_calls[0]).toMatchObject({ id: callId, status: 'completed', decided_by: account.userId, comment: 'refund approved' });
    expect(receiver.received('/refund')).toHaveLength(1);
    const decidedAgain = await client.POST('/api/v1/agents/{agent_id}/sessions/{session_id}/tool-calls/{call_id}/reject', {
      params: { path: { agent_id: agent.id, session_id: paused.session_id, call_id: callId } },
      body: {},
    });
    expectError(decidedAgain, 409, 'conflict');
  });
});
