import { verifyWebhook, type Agent, type AgentPlatformClient, type RequestBody } from '@agent-platform/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Api, ISO_MS, id, newAccount } from './harness/client.js';
import { startReceiver, type Receiver } from '@agent-platform/kit/testing';
import { ofTenant } from './harness/deliveries.js';
import { expectStatus, statusOf } from './harness/results.js';

let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(() => receiver.close());

async function createAgent(client: AgentPlatformClient, body: Partial<RequestBody<'/api/v1/agents', 'post'>> = {}): Promise<Agent> {
  return expectStatus(await client.POST('/api/v1/agents', { body: { name: 'Support bot', type: 'support', ...body } }), 201);
}

const agentPath = (agent_id: string) => ({ params: { path: { agent_id } } });


describe('agents', () => {
  it('are created with every field and read back as created', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const config = { model: 'gpt-4o-mini', temperature: 0.3, max_tokens: 512, system_prompt: 'Be brief.', top_p: 0.9 };
    const created = await createAgent(account.client, { description: 'Answers tickets', memory_types: ['semantic', 'procedural'], config });
    expect(created).toEqual({
      id: expect.stringMatching(id('agt')),
      name: 'Support bot',
      type: 'support',
      description: 'Answers tickets',
      memory_types: ['semantic', 'procedural'],
      config,
      memory_extraction: 'per_user',
      tools: [],
      status: 'active',
      version: 1,
      created_at: expect.stringMatching(ISO_MS),
      updated_at: expect.stringMatching(ISO_MS),
    });
    const read = await account.client.GET('/api/v1/agents/{agent_id}', agentPath(created.id));
    expect(expectStatus(read)).toEqual(created);
    // Raw: the /v1 alias is served but not part of the contract.
    expect((await api.get(`/v1/agents/${created.id}`, { token: account.accessToken })).body).toEqual(created);
  });

  it('get the documented defaults: semantic and episodic memory, an empty config, no description', async () => {
    const account = await newAccount(new Api());
    const created = await createAgent(account.client, { type: 'assistant', config: { temperature: 1 } });
    expect(created).toMatchObject({ type: 'assistant', description: null, memory_types: ['semantic', 'episodic'], config: { temperature: 1 } });
    expect(Object.keys(created.config)).toEqual(['temperature']);
  });

  it('are listed newest first, page by page', async () => {
    const account = await newAccount(new Api());
    const first = await createAgent(account.client, { name: 'first' });
    const second = await createAgent(account.client, { name: 'second' });
    const third = await createAgent(account.client, { name: 'third' });

    const list = async (query: { page?: number; per_page?: number }) => expectStatus(await account.client.GET('/api/v1/agents', { params: { query } }));
    const page1 = await list({ per_page: 2 });
    expect(page1).toMatchObject({ total: 3, page: 1, per_page: 2 });
    expect(page1.agents.map((agent) => agent.id)).toEqual([third.id, second.id]);
    expect(page1.agents[0]).toEqual(third);
    const page2 = await list({ per_page: 2, page: 2 });
    expect(page2).toMatchObject({ total: 3, page: 2, per_page: 2 });
    expect(page2.agents.map((agent) => agent.id)).toEqual([first.id]);
    expect(await list({ per_page: 2, page: 3 })).toMatchObject({ agents: [], total: 3 });
  });

  it('change with PATCH only in the fields sent; config and memory_types are replaced whole', async () => {
    const account = await newAccount(new Api());
    const agent = await createAgent(account.client, { description: 'v1', config: { model: 'm1', temperature: 0.5 } });
    const renamed = expectStatus(await account.client.PATCH('/api/v1/agents/{agent_id}', { ...agentPath(agent.id), body: { name: 'Renamed' } }));
    expect(renamed).toEqual({ ...agent, name: 'Renamed', updated_at: expect.stringMatching(ISO_MS) });
    expect(renamed.updated_at >= agent.updated_at).toBe(true);

    const reconfigured = expectStatus(
      await account.client.PATCH('/api/v1/agents/{agent_id}', { ...agentPath(agent.id), body: { config: { top_p: 0.5 }, memory_types: ['episodic'] } }),
    );
    expect(reconfigured).toMatchObject({ name: 'Renamed', description: 'v1', config: { top_p: 0.5 }, memory_types: ['episodic'] });
    expect(reconfigured.config).toEqual({ top_p: 0.5 });
    expect((await account.client.GET('/api/v1/agents/{agent_id}', agentPath(agent.id))).data).toEqual(reconfigured);
  });

  it('are replaced whole with PUT: what is left out is reset; id and created_at stay', async () => {
    const account = await newAccount(new Api());
    const agent = await createAgent(account.client, { description: 'old', memory_types: ['procedural'], config: { model: 'm1' } });
    const replaced = await account.client.PUT('/api/v1/agents/{agent_id}', { ...agentPath(agent.id), body: { name: 'New name', type: 'assistant' } });
    expect(expectStatus(replaced)).toEqual({
      ...agent,
      name: 'New name',
      type: 'assistant',
      description: null,
      memory_types: ['semantic', 'episodic'],
      config: {},
      // Procedural memory kept no facts; semantic memory does, per end user.
      memory_extraction: 'per_user',
      // New settings: the next version (decisions §16).
      version: 2,
      updated_at: expect.stringMatching(ISO_MS),
    });
  });

  it('are deleted with their sessions and memory', async () => {
    const { client } = await newAccount(new Api());
    const agent = await createAgent(client);
    const chat = expectStatus(await client.POST('/api/v1/agents/{agent_id}/chat', { ...agentPath(agent.id), body: { message: 'Remember me.' } }));
    const item = expectStatus(await client.POST('/api/v1/memory', { body: { agent_id: agent.id, memory_type: 'semantic', content: 'Order ord_777 shipped.' } }), 201);
    const document = expectStatus(await client.POST('/api/v1/memory/documents', { body: { agent_id: agent.id, content: 'A short manual.' } }), 201);

    const deleted = expectStatus(await client.DELETE('/api/v1/agents/{agent_id}', agentPath(agent.id)));
    expect(deleted).toEqual({ success: true, message: expect.any(String) });

    expect(await statusOf(client.GET('/api/v1/agents/{agent_id}', agentPath(agent.id)))).toBe(404);
    expect(await statusOf(client.GET('/api/v1/agents/{agent_id}/sessions', agentPath(agent.id)))).toBe(404);
    expect(await statusOf(client.GET('/api/v1/agents/{agent_id}/sessions/{session_id}/messages', { params: { path: { agent_id: agent.id, session_id: chat.session_id } } }))).toBe(404);
    expect(await statusOf(client.GET('/api/v1/memory', { params: { query: { agent_id: agent.id } } }))).toBe(404);
    expect(await statusOf(client.POST('/api/v1/memory/search', { body: { agent_id: agent.id, query: 'ord_777' } }))).toBe(404);
    // The rows themselves are gone, not just hidden behind the agent.
    expect(await statusOf(client.DELETE('/api/v1/memory/{memory_id}', { params: { path: { memory_id: item.id } } }))).toBe(404);
    expect(await statusOf(client.DELETE('/api/v1/memory/documents/{document_id}', { params: { path: { document_id: document.id } } }))).toBe(404);
    expect((await client.GET('/api/v1/agents')).data).toMatchObject({ agents: [], total: 0 });
  });
});

describe('agent events', () => {
  it('agent.created and agent.updated reach a subscribed webhook, signed, with the agent as data', async () => {
    const account = await newAccount(new Api());
    const webhook = expectStatus(
      await account.client.POST('/api/v1/webhooks', { body: { url: receiver.url('/hooks'), events: ['agent.created', 'agent.updated'] } }),
      201,
    );

    const agent = await createAgent(account.client, { config: { temperature: 0.1 } });
    const patched = await account.client.PATCH('/api/v1/agents/{agent_id}', { ...agentPath(agent.id), body: { name: 'Patched' } });
    const replaced = await account.client.PUT('/api/v1/agents/{agent_id}', { ...agentPath(agent.id), body: { name: 'Put', type: 'assistant' } });

    const deliveries = await receiver.waitFor(3, { match: ofTenant(account.tenantId), timeoutMs: 15_000 });
    const events = deliveries.map((delivery) => verifyWebhook(delivery.body, delivery.headers, webhook.signing_secret));
    // One tenant's events reach an endpoint in the order they were emitted.
    expect(events.map((event) => event.type)).toEqual(['agent.created', 'agent.updated', 'agent.updated']);
    expect(events.map((event) => event.data)).toEqual([agent, patched.data, replaced.data]);
    expect(new Set(events.map((event) => event.id)).size).toBe(3);
  });
});
