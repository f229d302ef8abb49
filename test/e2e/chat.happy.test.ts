import { verifyWebhook, type AgentPlatformClient, type ChatMessage, type ChatRequest } from '@agent-platform/client';
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

// Without memory extraction (decisions §14.2): its model calls are charged too, after the reply.
async function createAgent(client: AgentPlatformClient): Promise<string> {
  return expectStatus(await client.POST('/api/v1/agents', { body: { name: 'Support bot', type: 'support', config: { memory_extraction: false } } }), 201).id;
}

async function chat(client: AgentPlatformClient, agentId: string, body: ChatRequest): Promise<ChatMessage> {
  return expectStatus(await client.POST('/api/v1/agents/{agent_id}/chat', { params: { path: { agent_id: agentId } }, body }));
}

async function balance(client: AgentPlatformClient): Promise<number> {
  return expectStatus(await client.GET('/api/v1/billing/credits')).balance;
}

/** decisions §6: ceil(total_tokens / 1000) credits a turn, at least 1. */
const costOf = (reply: ChatMessage) => Math.max(1, Math.ceil(reply.usage.total_tokens / 1000));

describe('chatting with an agent (the built-in offline model)', () => {
  it('answers the reply with usage, a new session and the model', async () => {
    const { client } = await newAccount(new Api());
    const agentId = await createAgent(client);
    const reply = await chat(client, agentId, { message: 'Where is my order?' });
    expect(reply).toEqual({
      id: expect.stringMatching(id('msg')),
      role: 'assistant',
      content: expect.stringContaining('You said: "Where is my order?"'),
      status: 'completed',
      tool_calls: [],
      usage: { prompt_tokens: expect.any(Number), completion_tokens: expect.any(Number), total_tokens: expect.any(Number) },
      credits: 1,
      memories: [],
      citations: [],
      session_id: expect.stringMatching(id('ses')),
      run_id: expect.stringMatching(id('run')),
      model: 'offline',
      created_at: expect.stringMatching(ISO_MS),
    });
    expect(reply.content).toContain('This is the first turn of this session.');
    expect(reply.usage.prompt_tokens).toBeGreaterThan(0);
    expect(reply.usage.completion_tokens).toBeGreaterThan(0);
    expect(reply.usage.total_tokens).toBe(reply.usage.prompt_tokens + reply.usage.completion_tokens);
  });

  it('continues a session given its session_id, with the earlier turns in the context', async () => {
    const { client } = await newAccount(new Api());
    const agentId = await createAgent(client);
    const first = await chat(client, agentId, { message: 'My name is Ada.' });
    const second = await chat(client, agentId, { message: 'What is my name?', session_id: first.session_id });
    expect(second.session_id).toBe(first.session_id);
    expect(second.id).not.toBe(first.id);
    expect(second.content).toContain('This session has 1 earlier turn.');
    // The first turn is part of the second prompt.
    expect(second.usage.prompt_tokens).toBeGreaterThan(first.usage.prompt_tokens);
  });

  it("puts the agent's relevant memories into the context", async () => {
    const { client } = await newAccount(new Api());
    const agentId = await createAgent(client);
    const added = await client.POST('/api/v1/memory', {
      body: { agent_id: agentId, memory_type: 'semantic', content: 'The customer prefers to be contacted by carrier pigeon.' },
    });
    expectStatus(added, 201);
    const reply = await chat(client, agentId, { message: 'How should we contact the customer? Pigeon?' });
    expect(reply.content).toContain('The customer prefers to be contacted by carrier pigeon.');
    // The reply names what its context held.
    expect(reply.memories).toEqual([
      {
        id: expectStatus(added, 201).id,
        content: 'The customer prefers to be contacted by carrier pigeon.',
        score: expect.any(Number),
        metadata: {},
        memory_type: 'semantic',
        user_id: null,
        created_at: expect.stringMatching(ISO_MS),
      },
    ]);
  });

  it('lists sessions newest first and their messages oldest first, and forgets a deleted session', async () => {
    const { client } = await newAccount(new Api());
    const agentId = await createAgent(client);
    const first = await chat(client, agentId, { message: 'one' });
    const second = await chat(client, agentId, { message: 'two', session_id: first.session_id });
    const other = await chat(client, agentId, { message: 'elsewhere' });

    const sessions = expectStatus(await client.GET('/api/v1/agents/{agent_id}/sessions', { params: { path: { agent_id: agentId } } }));
    expect(sessions).toMatchObject({ total: 2, page: 1, per_page: 20 });
    expect(sessions.items).toEqual([
      { id: other.session_id, created_at: expect.stringMatching(ISO_MS), last_message_at: expect.stringMatching(ISO_MS), message_count: 2, user_id: null },
      { id: first.session_id, created_at: expect.stringMatching(ISO_MS), last_message_at: expect.stringMatching(ISO_MS), message_count: 4, user_id: null },
    ]);

    const session = { agent_id: agentId, session_id: first.session_id };
    const messagesOf = (query: { page?: number; per_page?: number } = {}) =>
      client.GET('/api/v1/agents/{agent_id}/sessions/{session_id}/messages', { params: { path: session, query } });
    const messages = expectStatus(await messagesOf());
    expect(messages).toMatchObject({ total: 4, page: 1, per_page: 20 });
    // User messages have no status, usage or calls; answers with no tool calls are completed.
    const asked = { usage: null, status: null, tool_calls: [], tool_call_id: null, name: null, model: null, credits: null, memories: [], citations: [] };
    const answered = { status: 'completed', tool_calls: [], tool_call_id: null, name: null };
    // An answer read back says what its reply said: model, credits and the memories it was given.
    const asAnswered = ({ id, content, usage, model, credits, memories, citations, run_id, created_at }: typeof first) => ({ id, role: 'assistant', content, usage, ...answered, model, credits, memories, citations, run_id, created_at });
    // Each message names the run of its turn.
    expect(messages.items).toEqual([
      { id: expect.stringMatching(id('msg')), role: 'user', content: 'one', ...asked, run_id: first.run_id, created_at: expect.stringMatching(ISO_MS) },
      asAnswered(first),
      { id: expect.stringMatching(id('msg')), role: 'user', content: 'two', ...asked, run_id: second.run_id, created_at: expect.stringMatching(ISO_MS) },
      asAnswered(second),
    ]);
    const paged = expectStatus(await messagesOf({ page: 2, per_page: 3 }));
    expect(paged.items.map((message) => message.id)).toEqual([second.id]);

    const deleted = await client.DELETE('/api/v1/agents/{agent_id}/sessions/{session_id}', { params: { path: session } });
    expect(expectStatus(deleted)).toEqual({ success: true, message: expect.any(String) });
    expect(await statusOf(messagesOf())).toBe(404);
    const again = client.POST('/api/v1/agents/{agent_id}/chat', { params: { path: { agent_id: agentId } }, body: { message: 'again', session_id: first.session_id } });
    expect(await statusOf(again)).toBe(404);
    const remaining = await client.GET('/api/v1/agents/{agent_id}/sessions', { params: { path: { agent_id: agentId } } });
    expect(remaining.data).toMatchObject({ total: 1, items: [{ id: other.session_id }] });
  });

  it('charges ceil(total_tokens / 1000) credits a turn, at least 1, in the ledger', async () => {
    const { client } = await newAccount(new Api());
    const agentId = await createAgent(client);
    const before = await balance(client);
    const short = await chat(client, agentId, { message: 'Hi' });
    const afterShort = await balance(client);
    expect(before - afterShort).toBe(costOf(short));
    expect(costOf(short)).toBe(1);

    // About 6,000 tokens of distinct words: a turn worth several credits.
    const long = Array.from({ length: 3_000 }, (_unused, index) => `word${index}`).join(' ');
    const big = await chat(client, agentId, { message: long, session_id: short.session_id });
    expect(big.usage.total_tokens).toBeGreaterThan(2_000);
    expect([short.credits, big.credits]).toEqual([costOf(short), costOf(big)]);
    const afterBig = await balance(client);
    expect(afterShort - afterBig).toBe(costOf(big));
    expect(costOf(big)).toBeGreaterThan(1);

    const ledger = expectStatus(await client.GET('/api/v1/billing/transactions'));
    expect(ledger.items.slice(0, 2)).toMatchObject([
      { kind: 'usage', amount: -costOf(big), balance_after: afterBig },
      { kind: 'usage', amount: -costOf(short), balance_after: afterShort },
    ]);
  });
});

describe('chat events', () => {
  it('agent.message.created and agent.message.completed reach a subscribed webhook', async () => {
    const account = await newAccount(new Api());
    const { client } = account;
    const webhook = expectStatus(
      await client.POST('/api/v1/webhooks', { body: { url: receiver.url('/hooks'), events: ['agent.message.created', 'agent.message.completed'] } }),
      201,
    );
    const agentId = await createAgent(client);
    const reply = await chat(client, agentId, { message: 'Ping from the test' });

    const mine = await receiver.waitFor(2, { match: ofTenant(account.tenantId), timeoutMs: 15_000 });
    const [created, completed, ...more] = mine.map((delivery) => verifyWebhook(delivery.body, delivery.headers, webhook.signing_secret));
    expect([created?.type, completed?.type, ...more.map((event) => event.type)]).toEqual(['agent.message.created', 'agent.message.completed']);

    const messages = expectStatus(
      await client.GET('/api/v1/agents/{agent_id}/sessions/{session_id}/messages', { params: { path: { agent_id: agentId, session_id: reply.session_id } } }),
    );
    const userMessage = messages.items.find((message) => message.role === 'user');
    expect(created?.data).toMatchObject({ agent_id: agentId, conversation_id: reply.session_id, message_id: userMessage?.id, content: 'Ping from the test' });
    expect(completed?.data).toEqual({
      agent_id: agentId,
      conversation_id: reply.session_id,
      message_id: reply.id,
      content: reply.content,
      tokens_used: reply.usage.total_tokens,
      latency_ms: expect.any(Number),
    });
    expect(completed?.type === 'agent.message.completed' && Number.isInteger(completed.data.latency_ms)).toBe(true);
  });
});
