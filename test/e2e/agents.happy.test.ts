import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Api, ISO_MS, id, newAccount, type Account } from './harness/client.js';
import { Receiver, verifyDelivery } from './harness/receiver.js';

interface AgentBody {
  id: string;
  name: string;
  type: string;
  description: string | null;
  memory_types: string[];
  config: Record<string, unknown>;
  status: string;
  created_at: string;
  updated_at: string;
}

let receiver: Receiver;
beforeAll(async () => {
  receiver = await Receiver.start();
});
afterAll(() => receiver.close());

async function createAgent(api: Api, account: Account, json: Record<string, unknown> = {}): Promise<AgentBody> {
  const created = await api.post<AgentBody>('/api/v1/agents', { token: account.accessToken, json: { name: 'Support bot', type: 'support', ...json } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body;
}

/** Deliveries for one tenant only: every test shares the receiver. */
async function deliveriesFor(tenantId: string, count: number, timeoutMs = 15_000) {
  const mine = () => receiver.received.filter((delivery) => delivery.body.includes(`"tenant_id":"${tenantId}"`));
  const deadline = Date.now() + timeoutMs;
  while (mine().length < count) {
    if (Date.now() > deadline) throw new Error(`expected ${count} deliveries for ${tenantId}, got ${mine().length}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return mine();
}

describe('agents', () => {
  it('are created with every field and read back as created', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const config = { model: 'gpt-4o-mini', temperature: 0.3, max_tokens: 512, system_prompt: 'Be brief.', top_p: 0.9 };
    const created = await createAgent(api, account, { description: 'Answers tickets', memory_types: ['semantic', 'procedural'], config });
    expect(created).toEqual({
      id: expect.stringMatching(id('agt')),
      name: 'Support bot',
      type: 'support',
      description: 'Answers tickets',
      memory_types: ['semantic', 'procedural'],
      config,
      status: 'active',
      created_at: expect.stringMatching(ISO_MS),
      updated_at: expect.stringMatching(ISO_MS),
    });
    const read = await api.get(`/api/v1/agents/${created.id}`, { token: account.accessToken });
    expect(read.status).toBe(200);
    expect(read.body).toEqual(created);
    expect((await api.get(`/v1/agents/${created.id}`, { token: account.accessToken })).body).toEqual(created);
  });

  it('get the documented defaults: semantic and episodic memory, an empty config, no description', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const created = await createAgent(api, account, { type: 'assistant', config: { temperature: 1 } });
    expect(created).toMatchObject({ type: 'assistant', description: null, memory_types: ['semantic', 'episodic'], config: { temperature: 1 } });
    expect(Object.keys(created.config)).toEqual(['temperature']);
  });

  it('are listed newest first, page by page', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const first = await createAgent(api, account, { name: 'first' });
    const second = await createAgent(api, account, { name: 'second' });
    const third = await createAgent(api, account, { name: 'third' });

    const page1 = await api.get<{ agents: AgentBody[] }>('/api/v1/agents', { token: account.accessToken, query: { per_page: 2 } });
    expect(page1.status).toBe(200);
    expect(page1.body).toMatchObject({ total: 3, page: 1, per_page: 2 });
    expect(page1.body.agents.map((agent) => agent.id)).toEqual([third.id, second.id]);
    expect(page1.body.agents[0]).toEqual(third);
    const page2 = await api.get<{ agents: AgentBody[] }>('/api/v1/agents', { token: account.accessToken, query: { per_page: 2, page: 2 } });
    expect(page2.body).toMatchObject({ total: 3, page: 2, per_page: 2 });
    expect(page2.body.agents.map((agent) => agent.id)).toEqual([first.id]);
    const beyond = await api.get<{ agents: AgentBody[] }>('/api/v1/agents', { token: account.accessToken, query: { per_page: 2, page: 3 } });
    expect(beyond.body).toMatchObject({ agents: [], total: 3 });
  });

  it('change with PATCH only in the fields sent; config and memory_types are replaced whole', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const agent = await createAgent(api, account, { description: 'v1', config: { model: 'm1', temperature: 0.5 } });
    const renamed = await api.patch<AgentBody>(`/api/v1/agents/${agent.id}`, { token: account.accessToken, json: { name: 'Renamed' } });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toEqual({ ...agent, name: 'Renamed', updated_at: expect.stringMatching(ISO_MS) });
    expect(renamed.body.updated_at >= agent.updated_at).toBe(true);

    const reconfigured = await api.patch<AgentBody>(`/api/v1/agents/${agent.id}`, {
      token: account.accessToken,
      json: { config: { top_p: 0.5 }, memory_types: ['episodic'] },
    });
    expect(reconfigured.body).toMatchObject({ name: 'Renamed', description: 'v1', config: { top_p: 0.5 }, memory_types: ['episodic'] });
    expect(reconfigured.body.config).toEqual({ top_p: 0.5 });
    expect((await api.get(`/api/v1/agents/${agent.id}`, { token: account.accessToken })).body).toEqual(reconfigured.body);
  });

  it('are replaced whole with PUT: what is left out is reset; id and created_at stay', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const agent = await createAgent(api, account, { description: 'old', memory_types: ['procedural'], config: { model: 'm1' } });
    const replaced = await api.request<AgentBody>('PUT', `/api/v1/agents/${agent.id}`, { token: account.accessToken, json: { name: 'New name', type: 'assistant' } });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toEqual({
      ...agent,
      name: 'New name',
      type: 'assistant',
      description: null,
      memory_types: ['semantic', 'episodic'],
      config: {},
      updated_at: expect.stringMatching(ISO_MS),
    });
  });

  it('are deleted with their sessions and memory', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const agent = await createAgent(api, account);
    const auth = { token: account.accessToken };
    const chat = await api.post<{ session_id: string }>(`/api/v1/agents/${agent.id}/chat`, { ...auth, json: { message: 'Remember me.' } });
    expect(chat.status).toBe(200);
    const item = await api.post<{ id: string }>('/api/v1/memory', { ...auth, json: { agent_id: agent.id, memory_type: 'semantic', content: 'Order ord_777 shipped.' } });
    expect(item.status).toBe(201);
    const document = await api.post<{ id: string }>('/api/v1/memory/documents', { ...auth, json: { agent_id: agent.id, content: 'A short manual.' } });
    expect(document.status).toBe(201);

    const deleted = await api.delete(`/api/v1/agents/${agent.id}`, auth);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ success: true, message: expect.any(String) });

    expect((await api.get(`/api/v1/agents/${agent.id}`, auth)).status).toBe(404);
    expect((await api.get(`/api/v1/agents/${agent.id}/sessions`, auth)).status).toBe(404);
    expect((await api.get(`/api/v1/agents/${agent.id}/sessions/${chat.body.session_id}/messages`, auth)).status).toBe(404);
    expect((await api.get('/api/v1/memory', { ...auth, query: { agent_id: agent.id } })).status).toBe(404);
    expect((await api.post('/api/v1/memory/search', { ...auth, json: { agent_id: agent.id, query: 'ord_777' } })).status).toBe(404);
    // The rows themselves are gone, not just hidden behind the agent.
    expect((await api.delete(`/api/v1/memory/${item.body.id}`, auth)).status).toBe(404);
    expect((await api.delete(`/api/v1/memory/documents/${document.body.id}`, auth)).status).toBe(404);
    expect((await api.get<{ agents: unknown[] }>('/api/v1/agents', auth)).body).toMatchObject({ agents: [], total: 0 });
  });
});

describe('agent events', () => {
  it('agent.created and agent.updated reach a subscribed webhook, signed, with the agent as data', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const webhook = await api.post<{ signing_secret: string }>('/api/v1/webhooks', {
      token: account.accessToken,
      json: { url: receiver.url, events: ['agent.created', 'agent.updated'] },
    });
    expect(webhook.status).toBe(201);

    const agent = await createAgent(api, account, { config: { temperature: 0.1 } });
    const patched = await api.patch<AgentBody>(`/api/v1/agents/${agent.id}`, { token: account.accessToken, json: { name: 'Patched' } });
    const replaced = await api.request<AgentBody>('PUT', `/api/v1/agents/${agent.id}`, { token: account.accessToken, json: { name: 'Put', type: 'assistant' } });

    const deliveries = await deliveriesFor(account.tenantId, 3);
    const events = deliveries.map((delivery) => verifyDelivery(delivery, webhook.body.signing_secret));
    // One tenant's events reach an endpoint in the order they were emitted.
    expect(events.map((event) => event.type)).toEqual(['agent.created', 'agent.updated', 'agent.updated']);
    expect(events.map((event) => event.data)).toEqual([agent, patched.body, replaced.body]);
    expect(new Set(events.map((event) => event.id)).size).toBe(3);
  });
});
