import { afterAll, beforeAll, describe, expect } from 'vitest';
import { agentMemoryTest, databaseTest, eventsOf, expectError, newTenant, startAgentMemory, type AgentMemoryHarness } from './support/harness.js';
import { startFakeOpenAI, type FakeOpenAI } from './support/fake-openai.js';

const test = agentMemoryTest();

describe('Chat with the offline model', () => {
  test('answers with usage, session and model; continues the session with its history and quotes relevant memories', async ({ service }) => {
    const tenant = newTenant();
    const call = { principal: tenant.principal };
    const agent = await service.createAgent(tenant);
    await service.memory.addMemory({ agentId: agent.id, memoryType: 'semantic', content: 'The customer Ana prefers e-mail over phone calls.' }, call);

    const first = await service.chat.chat({ agentId: agent.id, message: 'How should I contact Ana?' }, call);
    expect(first).toMatchObject({ role: 'assistant', model: 'offline' });
    expect(first.id).toMatch(/^msg_/);
    expect(first.sessionId).toMatch(/^ses_/);
    expect(first.content).toContain('This is the first turn of this session.');
    expect(first.content).toContain('prefers e-mail');
    expect(first.usage!.totalTokens).toBe(first.usage!.promptTokens + first.usage!.completionTokens);
    expect(first.usage!.promptTokens).toBeGreaterThan(0);
    // The reply names the memories its context held, and what the turn cost.
    expect(first.memories).toEqual([{ item: expect.objectContaining({ memoryType: 'semantic', content: 'The customer Ana prefers e-mail over phone calls.' }), score: expect.any(Number) }]);
    expect(first.credits).toBe(Math.max(1, Math.ceil(first.usage!.totalTokens / 1000)));

    const second = await service.chat.chat({ agentId: agent.id, message: 'And her order?', sessionId: first.sessionId }, call);
    expect(second.sessionId).toBe(first.sessionId);
    expect(second.content).toContain('This session has 1 earlier turn.');

    const sessions = await service.chat.listSessions({ agentId: agent.id, page: undefined }, call);
    expect(sessions.items).toEqual([expect.objectContaining({ id: first.sessionId, messageCount: 4 })]);
    const messages = await service.chat.listSessionMessages({ agentId: agent.id, sessionId: first.sessionId, page: undefined }, call);
    expect(messages.items.map((message) => [message.role, message.content.slice(0, 12)])).toEqual([
      ['user', 'How should I'],
      ['assistant', first.content.slice(0, 12)],
      ['user', 'And her orde'],
      ['assistant', second.content.slice(0, 12)],
    ]);
    expect(messages.items[0]!.usage).toBeUndefined();
    expect(messages.items[1]!.usage).toEqual(first.usage);
  });

  test('charges ceil(total_tokens / 1000), at least 1, once per turn, and records both events', async ({ service }) => {
    const tenant = newTenant();
    const call = { principal: tenant.principal };
    const agent = await service.createAgent(tenant, { configJson: JSON.stringify({ memory_extraction: false }) });
    const reply = await service.chat.chat({ agentId: agent.id, message: 'word '.repeat(2_500) }, call);
    const expected = Math.max(1, Math.ceil(reply.usage!.totalTokens / 1000));
    expect(expected).toBeGreaterThan(1);
    expect(service.credits.chargeOf(tenant.tenantId, reply.id)).toBe(expected);
    expect(reply.credits).toBe(expected);
    expect(service.credits.balanceOf(tenant.tenantId)).toBe(1_000 - expected);
    const [charged] = await service.database.query<{ credits: number; charged_at: Date | null }>(`select credits, charged_at from chat_messages where id = $1`, [reply.id]);
    expect(charged).toMatchObject({ credits: expected, charged_at: expect.any(Date) });

    const [created] = await eventsOf(service.database, tenant.tenantId, 'agent.message.created');
    const [completed] = await eventsOf(service.database, tenant.tenantId, 'agent.message.completed');
    expect(created!.data).toMatchObject({ agent_id: agent.id, conversation_id: reply.sessionId, role: 'user' });
    expect(completed!.data).toEqual({
      agent_id: agent.id,
      conversation_id: reply.sessionId,
      message_id: reply.id,
      content: reply.content,
      tokens_used: reply.usage!.totalTokens,
      latency_ms: expect.any(Number),
    });
  });

  test('charges a turn again when identity answers only on a later attempt, but only once', async ({ service }) => {
    const tenant = newTenant();
    const agent = await service.createAgent(tenant, { configJson: JSON.stringify({ memory_extraction: false }) });
    service.credits.failCharges = 2;
    const reply = await service.chat.chat({ agentId: agent.id, message: 'hello' }, { principal: tenant.principal });
    expect(service.credits.chargeOf(tenant.tenantId, reply.id)).toBe(1);
    expect(service.credits.balanceOf(tenant.tenantId)).toBe(999);
  });

  test('refuses with insufficient_credits below 1 credit, storing nothing', async ({ service }) => {
    const tenant = newTenant();
    const agent = await service.createAgent(tenant);
    service.credits.balances.set(tenant.tenantId, 0);
    await expectError(service.chat.chat({ agentId: agent.id, message: 'hello' }, { principal: tenant.principal }), 'insufficient_credits');
    expect(await service.database.query(`select 1 from chat_sessions where agent_id = $1`, [agent.id])).toEqual([]);
  });

  test('names bad input and hides other tenants: message length, unknown session, foreign agent', async ({ service }) => {
    const [tenant, stranger] = [newTenant(), newTenant()];
    const call = { principal: tenant.principal };
    const agent = await service.createAgent(tenant);
    const tooLong = await expectError(service.chat.chat({ agentId: agent.id, message: 'x'.repeat(32_001) }, call), 'validation_error');
    expect(tooLong.details.map((detail) => detail.field)).toEqual(['message']);
    await expectError(service.chat.chat({ agentId: agent.id, message: ' ' }, call), 'validation_error');
    await expectError(service.chat.chat({ agentId: agent.id, message: 'hi', sessionId: 'ses_01JD0000000000000000000000' }, call), 'not_found');
    await expectError(service.chat.chat({ agentId: agent.id, message: 'hi', sessionId: 'not-a-session' }, call), 'not_found');
    await expectError(service.chat.chat({ agentId: agent.id, message: 'hi' }, { principal: stranger.principal }), 'not_found');
    const mine = await service.chat.chat({ agentId: agent.id, message: 'hi' }, call);
    const other = await service.createAgent(tenant);
    await expectError(service.chat.chat({ agentId: other.id, message: 'hi', sessionId: mine.sessionId }, call), 'not_found');
  });

  test('streams pieces that add up to the reply, then the stored reply', async ({ service }) => {
    const tenant = newTenant();
    const call = { principal: tenant.principal };
    const agent = await service.createAgent(tenant);
    const deltas: string[] = [];
    const completed = [];
    for await (const event of service.chat.streamChat({ agentId: agent.id, message: 'Tell me a story' }, call)) {
      if (event.delta !== undefined) deltas.push(event.delta);
      if (event.completed) completed.push(event.completed);
    }
    expect(deltas.length).toBeGreaterThan(3);
    expect(completed).toHaveLength(1);
    expect(deltas.join('')).toBe(completed[0]!.content);
    const stored = await service.chat.listSessionMessages({ agentId: agent.id, sessionId: completed[0]!.sessionId, page: undefined }, call);
    expect(stored.items.map((message) => message.role)).toEqual(['user', 'assistant']);
  });

  test('deleting a session forgets its messages', async ({ service }) => {
    const tenant = newTenant();
    const call = { principal: tenant.principal };
    const agent = await service.createAgent(tenant);
    const reply = await service.chat.chat({ agentId: agent.id, message: 'remember me' }, call);
    await service.chat.deleteSession({ agentId: agent.id, sessionId: reply.sessionId }, call);
    await expectError(service.chat.listSessionMessages({ agentId: agent.id, sessionId: reply.sessionId, page: undefined }, call), 'not_found');
    expect(await service.database.query(`select 1 from chat_messages where session_id = $1`, [reply.sessionId])).toEqual([]);
    await expectError(service.chat.deleteSession({ agentId: agent.id, sessionId: reply.sessionId }, call), 'not_found');
  });
});

describe('Chat against an OpenAI-compatible server that fails', () => {
  let fake: FakeOpenAI;
  let service: AgentMemoryHarness;
  beforeAll(async () => {
    fake = await startFakeOpenAI();
  });
  afterAll(async () => {
    await service?.stop();
    await fake.close();
  });

  databaseTest('answers upstream_error for an error, garbage or a stall, charges nothing and stores no half turn', async ({ database }) => {
    service = await startAgentMemory(database, { env: { LLM_BASE_URL: fake.baseURL, LLM_MODEL: 'tiny', LLM_TIMEOUT_MS: '500' } });
    const tenant = newTenant();
    const call = { principal: tenant.principal };
    const agent = await service.createAgent(tenant, { configJson: JSON.stringify({ memory_extraction: false }) });

    fake.chat({ kind: 'answer', content: 'Real answer' });
    const ok = await service.chat.chat({ agentId: agent.id, message: 'hi' }, call);
    expect(ok).toMatchObject({ content: 'Real answer', model: 'tiny', usage: { promptTokens: 11, completionTokens: 7, totalTokens: 18 } });

    for (const script of [{ kind: 'error', status: 500 }, { kind: 'garbage' }, { kind: 'stall' }, { kind: 'no-choices' }] as const) {
      fake.chat(script);
      await expectError(service.chat.chat({ agentId: agent.id, message: 'again', sessionId: ok.sessionId }, call), 'upstream_error');
    }
    fake.chat({ kind: 'stall-mid-answer' });
    const streamed = (async () => {
      for await (const _event of service.chat.streamChat({ agentId: agent.id, message: 'stream', sessionId: ok.sessionId }, call)) void _event;
    })();
    await expectError(streamed, 'upstream_error');

    expect(service.credits.charges).toHaveLength(1);
    const [session] = await database.query<{ message_count: number }>(`select message_count from chat_sessions where id = $1`, [ok.sessionId]);
    expect(session!.message_count).toBe(2);
    expect(await database.query(`select 1 from chat_messages where session_id = $1`, [ok.sessionId])).toHaveLength(2);
  });
});
