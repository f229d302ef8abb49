import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { newAgent, type ChatReply } from '../support/agents.js';
import { ANY_NUMBER, as, expectError, ISO_MS, matching, newAccount, startHarness, type Account, type Harness } from '../support/harness.js';
import { eventsOf } from '../support/sse.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterEach(() => {
  h.agentMemory.heal();
});
afterAll(async () => {
  await h.close();
});

const MESSAGE_ID = /^msg_[0-9A-HJKMNP-TV-Z]{26}$/;
const SESSION_ID = /^ses_[0-9A-HJKMNP-TV-Z]{26}$/;

/** The reply of the built-in offline model (no LLM is configured): it quotes the turn it was given. */
function offlineReply(message: string, sessionId: RegExp | string, earlierTurns = 0): unknown {
  const history = earlierTurns === 0 ? 'This is the first turn of this session.' : `This session has ${earlierTurns} earlier turn`;
  return {
    id: matching(MESSAGE_ID),
    role: 'assistant',
    content: expect.stringMatching(new RegExp(`You said: "${message}"\\n${history}`)) as unknown,
    status: 'completed',
    tool_calls: [],
    usage: { prompt_tokens: ANY_NUMBER, completion_tokens: ANY_NUMBER, total_tokens: ANY_NUMBER },
    credits: ANY_NUMBER,
    memories: expect.any(Array) as unknown,
    citations: expect.any(Array) as unknown,
    session_id: typeof sessionId === 'string' ? sessionId : matching(sessionId),
    run_id: matching(/^run_/),
    model: 'offline',
    created_at: matching(ISO_MS),
  };
}

async function balance(account: Account): Promise<number> {
  return (await as(h.app, account.token, { method: 'GET', url: '/api/v1/billing/credits' })).json<{ balance: number }>().balance;
}

describe('POST /agents/{agent_id}/chat', () => {
  it("answers the model's reply as JSON in a new session, continues that session, and charges the turn", async () => {
    const account = await newAccount(h.app);
    // Without extraction, whose model calls are charged too, after the reply.
    const agent = await newAgent(h.app, account.token, { config: { memory_extraction: false } });
    const before = await balance(account);
    const first = await as(h.app, account.token, { method: 'POST', url: `/api/v1/agents/${agent.id}/chat`, payload: { message: 'Hello there' } });
    expect(first.statusCode, first.body).toBe(200);
    expect(first.headers['content-type']).toContain('application/json');
    const reply = first.json<ChatReply>();
    expect(reply).toEqual(offlineReply('Hello there', SESSION_ID));
    expect(reply.usage.total_tokens).toBe(reply.usage.prompt_tokens + reply.usage.completion_tokens);
    // decisions §6: ceil(total_tokens / 1000) credits, at least 1.
    expect(await balance(account)).toBe(before - Math.max(1, Math.ceil(reply.usage.total_tokens / 1000)));

    const second = await as(h.app, account.token, { method: 'POST', url: `/api/v1/agents/${agent.id}/chat`, payload: { message: 'Again', session_id: reply.session_id } });
    expect(second.statusCode, second.body).toBe(200);
    expect(second.json()).toEqual(offlineReply('Again', reply.session_id, 1));

    const messages = await as(h.app, account.token, { method: 'GET', url: `/api/v1/agents/${agent.id}/sessions/${reply.session_id}/messages` });
    expect(messages.json()).toMatchObject({
      items: [
        { role: 'user', content: 'Hello there', usage: null },
        { id: reply.id, role: 'assistant', content: reply.content, usage: reply.usage, created_at: reply.created_at },
        { role: 'user', content: 'Again', usage: null },
        { id: second.json<ChatReply>().id, role: 'assistant' },
      ],
      total: 4,
    });
  });

  it('waits for a slow model past the general gRPC deadline (MODEL_DEADLINE_MS)', async () => {
    const account = await newAccount(h.app);
    const agent = await newAgent(h.app, account.token);
    const slow = Promise.withResolvers<void>();
    h.agentMemory.inject('Chat', { holdUntil: slow.promise });
    const reached = h.agentMemory.nextCall('Chat');
    const answer = as(h.app, account.token, { method: 'POST', url: `/api/v1/agents/${agent.id}/chat`, payload: { message: 'slow' } });
    await reached;
    // A call made after the turn began, cut off by the general deadline: that deadline has passed for the turn too.
    h.agentMemory.inject('ListAgents', { hang: true });
    expectError(await as(h.app, account.token, { method: 'GET', url: '/api/v1/agents' }), 503, 'service_unavailable');
    slow.resolve();
    const answered = await answer;
    expect(answered.statusCode, answered.body).toBe(200);
    expect(answered.json()).toEqual(offlineReply('slow', SESSION_ID));
  });

  it('with stream: true relays the turn as server-sent events: the deltas, then the completed reply', async () => {
    const account = await newAccount(h.app);
    const agent = await newAgent(h.app, account.token);
    const answer = await as(h.app, account.token, {
      method: 'POST',
      url: `/v1/agents/${agent.id}/chat`,
      headers: { 'x-request-id': 'sse-req-1' },
      payload: { message: 'Hi you', stream: true },
    });
    expect(answer.statusCode, answer.body).toBe(200);
    expect(answer.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(answer.headers['cache-control']).toBe('no-cache');
    // The headers every response carries survive the stream.
    expect(answer.headers['x-request-id']).toBe('sse-req-1');
    expect(answer.headers['x-ratelimit-limit']).toBeDefined();
    expect(answer.headers['x-ratelimit-remaining']).toBeDefined();

    const events = eventsOf(answer.body);
    const completed = events.at(-1);
    expect(completed?.event).toBe('message.completed');
    const reply = completed?.data as ChatReply;
    expect(reply).toEqual(offlineReply('Hi you', SESSION_ID));
    const deltas = events.slice(0, -1);
    // The offline model streams its reply a word at a time.
    expect(deltas.length).toBeGreaterThan(10);
    // Each names the turn's run (decisions §16).
    for (const delta of deltas) expect(delta).toEqual({ event: 'message.delta', data: { content: matching(/^\S+\s*$/), run_id: reply.run_id } });
    expect(deltas.map((delta) => (delta.data as { content: string }).content).join('')).toBe(reply.content);

    // The completed event is the turn as stored: the same reply as the plain call would have answered.
    const messages = await as(h.app, account.token, { method: 'GET', url: `/api/v1/agents/${agent.id}/sessions/${reply.session_id}/messages` });
    expect(messages.json()).toMatchObject({ items: [{ content: 'Hi you' }, { id: reply.id, content: reply.content, usage: reply.usage, created_at: reply.created_at }], total: 2 });
  });

  it('with stream: false answers JSON', async () => {
    const account = await newAccount(h.app);
    const agent = await newAgent(h.app, account.token);
    const answer = await as(h.app, account.token, { method: 'POST', url: `/api/v1/agents/${agent.id}/chat`, payload: { message: 'x', stream: false } });
    expect(answer.statusCode, answer.body).toBe(200);
    expect(answer.headers['content-type']).toContain('application/json');
    expect(answer.json()).toEqual(offlineReply('x', SESSION_ID));
  });
});
