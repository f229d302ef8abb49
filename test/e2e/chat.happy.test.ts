import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Api, ISO_MS, id, newAccount, type Account } from './harness/client.js';
import { Receiver, verifyDelivery } from './harness/receiver.js';

interface ChatReply {
  id: string;
  role: string;
  content: string;
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
  session_id: string;
  model: string;
  created_at: string;
}

let receiver: Receiver;
beforeAll(async () => {
  receiver = await Receiver.start();
});
afterAll(() => receiver.close());

async function createAgent(api: Api, account: Account): Promise<string> {
  const created = await api.post<{ id: string }>('/api/v1/agents', { token: account.accessToken, json: { name: 'Support bot', type: 'support' } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body.id;
}

async function chat(api: Api, account: Account, agentId: string, json: { message: string; session_id?: string }): Promise<ChatReply> {
  const answer = await api.post<ChatReply>(`/api/v1/agents/${agentId}/chat`, { token: account.accessToken, json });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body;
}

async function balance(api: Api, account: Account): Promise<number> {
  const credits = await api.get<{ balance: number }>('/api/v1/billing/credits', { token: account.accessToken });
  expect(credits.status).toBe(200);
  return credits.body.balance;
}

/** decisions §6: ceil(total_tokens / 1000) credits a turn, at least 1. */
const costOf = (reply: ChatReply) => Math.max(1, Math.ceil(reply.usage.total_tokens / 1000));

describe('chatting with an agent (the built-in offline model)', () => {
  it('answers the reply with usage, a new session and the model', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const agentId = await createAgent(api, account);
    const reply = await chat(api, account, agentId, { message: 'Where is my order?' });
    expect(reply).toEqual({
      id: expect.stringMatching(id('msg')),
      role: 'assistant',
      content: expect.stringContaining('You said: "Where is my order?"'),
      usage: { prompt_tokens: expect.any(Number), completion_tokens: expect.any(Number), total_tokens: expect.any(Number) },
      session_id: expect.stringMatching(id('ses')),
      model: 'offline',
      created_at: expect.stringMatching(ISO_MS),
    });
    expect(reply.content).toContain('This is the first turn of this session.');
    expect(reply.usage.prompt_tokens).toBeGreaterThan(0);
    expect(reply.usage.completion_tokens).toBeGreaterThan(0);
    expect(reply.usage.total_tokens).toBe(reply.usage.prompt_tokens + reply.usage.completion_tokens);
  });

  it('continues a session given its session_id, with the earlier turns in the context', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const agentId = await createAgent(api, account);
    const first = await chat(api, account, agentId, { message: 'My name is Ada.' });
    const second = await chat(api, account, agentId, { message: 'What is my name?', session_id: first.session_id });
    expect(second.session_id).toBe(first.session_id);
    expect(second.id).not.toBe(first.id);
    expect(second.content).toContain('This session has 1 earlier turn.');
    // The first turn is part of the second prompt.
    expect(second.usage.prompt_tokens).toBeGreaterThan(first.usage.prompt_tokens);
  });

  it("puts the agent's relevant memories into the context", async () => {
    const api = new Api();
    const account = await newAccount(api);
    const agentId = await createAgent(api, account);
    const added = await api.post('/api/v1/memory', {
      token: account.accessToken,
      json: { agent_id: agentId, memory_type: 'semantic', content: 'The customer prefers to be contacted by carrier pigeon.' },
    });
    expect(added.status).toBe(201);
    const reply = await chat(api, account, agentId, { message: 'How should we contact the customer? Pigeon?' });
    expect(reply.content).toContain('The customer prefers to be contacted by carrier pigeon.');
  });

  it('lists sessions newest first and their messages oldest first, and forgets a deleted session', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const auth = { token: account.accessToken };
    const agentId = await createAgent(api, account);
    const first = await chat(api, account, agentId, { message: 'one' });
    const second = await chat(api, account, agentId, { message: 'two', session_id: first.session_id });
    const other = await chat(api, account, agentId, { message: 'elsewhere' });

    const sessions = await api.get<{ items: Record<string, unknown>[] }>(`/api/v1/agents/${agentId}/sessions`, auth);
    expect(sessions.status).toBe(200);
    expect(sessions.body).toMatchObject({ total: 2, page: 1, per_page: 20 });
    expect(sessions.body.items).toEqual([
      { id: other.session_id, created_at: expect.stringMatching(ISO_MS), last_message_at: expect.stringMatching(ISO_MS), message_count: 2 },
      { id: first.session_id, created_at: expect.stringMatching(ISO_MS), last_message_at: expect.stringMatching(ISO_MS), message_count: 4 },
    ]);

    const path = `/api/v1/agents/${agentId}/sessions/${first.session_id}/messages`;
    const messages = await api.get<{ items: Record<string, unknown>[] }>(path, auth);
    expect(messages.body).toMatchObject({ total: 4, page: 1, per_page: 20 });
    expect(messages.body.items).toEqual([
      { id: expect.stringMatching(id('msg')), role: 'user', content: 'one', usage: null, created_at: expect.stringMatching(ISO_MS) },
      { id: first.id, role: 'assistant', content: first.content, usage: first.usage, created_at: first.created_at },
      { id: expect.stringMatching(id('msg')), role: 'user', content: 'two', usage: null, created_at: expect.stringMatching(ISO_MS) },
      { id: second.id, role: 'assistant', content: second.content, usage: second.usage, created_at: second.created_at },
    ]);
    const paged = await api.get<{ items: { id: string }[] }>(path, { ...auth, query: { page: 2, per_page: 3 } });
    expect(paged.body.items.map((message) => message.id)).toEqual([second.id]);

    const deleted = await api.delete(`/api/v1/agents/${agentId}/sessions/${first.session_id}`, auth);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ success: true, message: expect.any(String) });
    expect((await api.get(path, auth)).status).toBe(404);
    expect((await api.post(`/api/v1/agents/${agentId}/chat`, { ...auth, json: { message: 'again', session_id: first.session_id } })).status).toBe(404);
    expect((await api.get(`/api/v1/agents/${agentId}/sessions`, auth)).body).toMatchObject({ total: 1, items: [{ id: other.session_id }] });
  });

  it('charges ceil(total_tokens / 1000) credits a turn, at least 1, in the ledger', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const agentId = await createAgent(api, account);
    const before = await balance(api, account);
    const short = await chat(api, account, agentId, { message: 'Hi' });
    const afterShort = await balance(api, account);
    expect(before - afterShort).toBe(costOf(short));
    expect(costOf(short)).toBe(1);

    // About 6,000 tokens of distinct words: a turn worth several credits.
    const long = Array.from({ length: 3_000 }, (_unused, index) => `word${index}`).join(' ');
    const big = await chat(api, account, agentId, { message: long, session_id: short.session_id });
    expect(big.usage.total_tokens).toBeGreaterThan(2_000);
    const afterBig = await balance(api, account);
    expect(afterShort - afterBig).toBe(costOf(big));
    expect(costOf(big)).toBeGreaterThan(1);

    const ledger = await api.get<{ items: { amount: number; kind: string; balance_after: number }[] }>('/api/v1/billing/transactions', { token: account.accessToken });
    expect(ledger.body.items.slice(0, 2)).toMatchObject([
      { kind: 'usage', amount: -costOf(big), balance_after: afterBig },
      { kind: 'usage', amount: -costOf(short), balance_after: afterShort },
    ]);
  });
});

describe('chat events', () => {
  it('agent.message.created and agent.message.completed reach a subscribed webhook', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const webhook = await api.post<{ signing_secret: string }>('/api/v1/webhooks', {
      token: account.accessToken,
      json: { url: receiver.url, events: ['agent.message.created', 'agent.message.completed'] },
    });
    expect(webhook.status).toBe(201);
    const agentId = await createAgent(api, account);
    const reply = await chat(api, account, agentId, { message: 'Ping from the test' });

    const deadline = Date.now() + 15_000;
    const mine = () => receiver.received.filter((delivery) => delivery.body.includes(`"tenant_id":"${account.tenantId}"`));
    while (mine().length < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    const events = mine().map((delivery) => verifyDelivery(delivery, webhook.body.signing_secret));
    expect(events.map((event) => event.type)).toEqual(['agent.message.created', 'agent.message.completed']);

    const messages = await api.get<{ items: { id: string; role: string }[] }>(`/api/v1/agents/${agentId}/sessions/${reply.session_id}/messages`, {
      token: account.accessToken,
    });
    const userMessage = messages.body.items.find((message) => message.role === 'user');
    expect(events[0]?.data).toMatchObject({ agent_id: agentId, conversation_id: reply.session_id, message_id: userMessage?.id, content: 'Ping from the test' });
    expect(events[1]?.data).toEqual({
      agent_id: agentId,
      conversation_id: reply.session_id,
      message_id: reply.id,
      content: reply.content,
      tokens_used: reply.usage.total_tokens,
      latency_ms: expect.any(Number),
    });
    expect(Number.isInteger(events[1]?.data['latency_ms'])).toBe(true);
  });
});
