import { describe, expect, it } from 'vitest';
import { Api, ISO_MS, id, newAccount, type Account } from './harness/client.js';
import { allEvents, EventStreamParser, postForEvents, type SseEvent } from './harness/sse.js';

interface ChatReply {
  id: string;
  role: string;
  content: string;
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
  session_id: string;
  model: string;
  created_at: string;
}

async function createAgent(api: Api, account: Account): Promise<string> {
  const created = await api.post<{ id: string }>('/api/v1/agents', { token: account.accessToken, json: { name: 'Streamer', type: 'assistant' } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body.id;
}

async function streamTurn(api: Api, account: Account, agentId: string, json: Record<string, unknown>) {
  const response = await postForEvents(api, `/api/v1/agents/${agentId}/chat`, { token: account.accessToken, json: { ...json, stream: true } });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  expect(response.events).toBeDefined();
  return { response, events: await allEvents(response.events!) };
}

function replyShape(reply: ChatReply) {
  return Object.fromEntries(Object.entries(reply).map(([key, value]) => [key, value === null ? 'null' : typeof value]));
}

describe('the test harness event-stream parser', () => {
  it('follows the WHATWG framing: line ends, comments, a space after the colon, multi-line data, split chunks', () => {
    const parser = new EventStreamParser();
    const text = '\uFEFF: comment\r\nevent: a\r\ndata: one\r\ndata:two\r\n\r\ndata: {"x":1}\n\nevent: b\rdata\r\rid: 7\nretry: 1500\ndata: last\n\nevent: lost\ndata: no blank line';
    const events: SseEvent[] = [];
    // Byte by byte, so a CRLF split in two is handled too.
    for (const char of text) events.push(...parser.feed(char));
    expect(events).toEqual([
      { type: 'a', data: 'one\ntwo', lastEventId: '' },
      { type: 'message', data: '{"x":1}', lastEventId: '' },
      { type: 'b', data: '', lastEventId: '' },
      { type: 'message', data: 'last', lastEventId: '7' },
    ]);
    expect(parser.retry).toBe(1500);
  });
});

describe('a streamed chat turn (stream: true)', () => {
  it('is text/event-stream: message.delta events that join into exactly one message.completed, last', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const agentId = await createAgent(api, account);
    const { response, events } = await streamTurn(api, account, agentId, { message: 'Tell me about streaming.' });
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(response.headers.get('x-request-id')).toBeTruthy();
    expect(response.headers.get('x-ratelimit-limit')).toBeTruthy();

    const deltas = events.filter((event) => event.type === 'message.delta');
    const completed = events.filter((event) => event.type === 'message.completed');
    expect(deltas.length).toBeGreaterThan(1);
    expect(completed).toHaveLength(1);
    expect(events.at(-1)?.type).toBe('message.completed');
    expect(events.map((event) => event.type).filter((type) => type !== 'message.delta' && type !== 'message.completed')).toEqual([]);

    const pieces = deltas.map((event) => JSON.parse(event.data) as { content: string });
    for (const piece of pieces) expect(Object.keys(piece)).toEqual(['content']);
    const reply = JSON.parse(completed[0]!.data) as ChatReply;
    expect(pieces.map((piece) => piece.content).join('')).toBe(reply.content);
    expect(reply).toEqual({
      id: expect.stringMatching(id('msg')),
      role: 'assistant',
      content: expect.stringContaining('You said: "Tell me about streaming."'),
      usage: { prompt_tokens: expect.any(Number), completion_tokens: expect.any(Number), total_tokens: expect.any(Number) },
      session_id: expect.stringMatching(id('ses')),
      model: 'offline',
      created_at: expect.stringMatching(ISO_MS),
    });
  });

  it('completes with the same JSON object a non-streamed turn answers, and is stored and charged alike', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const agentId = await createAgent(api, account);
    const plain = await api.post<ChatReply>(`/api/v1/agents/${agentId}/chat`, { token: account.accessToken, json: { message: 'First, plainly.' } });
    expect(plain.status).toBe(200);
    const before = (await api.get<{ balance: number }>('/api/v1/billing/credits', { token: account.accessToken })).body.balance;

    const { events } = await streamTurn(api, account, agentId, { message: 'Then streamed.', session_id: plain.body.session_id });
    const streamed = JSON.parse(events.at(-1)!.data) as ChatReply;
    expect(replyShape(streamed)).toEqual(replyShape(plain.body));
    expect(streamed.session_id).toBe(plain.body.session_id);
    expect(streamed.content).toContain('This session has 1 earlier turn.');

    const after = (await api.get<{ balance: number }>('/api/v1/billing/credits', { token: account.accessToken })).body.balance;
    expect(before - after).toBe(Math.max(1, Math.ceil(streamed.usage.total_tokens / 1000)));
    const messages = await api.get<{ items: Record<string, unknown>[] }>(`/api/v1/agents/${agentId}/sessions/${streamed.session_id}/messages`, {
      token: account.accessToken,
    });
    expect(messages.body.items.at(-1)).toEqual({ id: streamed.id, role: 'assistant', content: streamed.content, usage: streamed.usage, created_at: streamed.created_at });
  });

  it.each([
    ['an unknown agent', 'agt_01JD0000000000000000000000', { message: 'hi' }, 404, 'not_found'],
    ['an unknown session', undefined, { message: 'hi', session_id: 'ses_01JD0000000000000000000000' }, 404, 'not_found'],
    ['an empty message', undefined, { message: '' }, 422, 'validation_error'],
    ['a blank message', undefined, { message: '   \n ' }, 422, 'validation_error'],
    ['a message over 32,000 characters', undefined, { message: 'a'.repeat(32_001) }, 422, 'validation_error'],
  ])('fails before the stream as plain JSON for %s', async (_label, agent, json, status, code) => {
    const api = new Api();
    const account = await newAccount(api);
    const agentId = agent ?? (await createAgent(api, account));
    const response = await postForEvents(api, `/api/v1/agents/${agentId}/chat`, { token: account.accessToken, json: { ...json, stream: true } });
    expect(response.status).toBe(status);
    expect(response.events).toBeUndefined();
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(response.body).toMatchObject({ error: code, message: expect.any(String) });
    if (code === 'validation_error') expect((response.body as { details: { field: string }[] }).details.map((detail) => detail.field)).toEqual(['message']);
  });

  it('can be left early by the client, and the next turn still works', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const agentId = await createAgent(api, account);
    const aborter = new AbortController();
    const response = await postForEvents(api, `/api/v1/agents/${agentId}/chat`, {
      token: account.accessToken,
      json: { message: 'A long answer, please. '.repeat(50), stream: true },
      signal: aborter.signal,
    });
    const first = await response.events!.next();
    expect(first.value).toMatchObject({ type: 'message.delta' });
    aborter.abort();
    await response.events!.return(undefined);
    const { events } = await streamTurn(api, account, agentId, { message: 'Still there?' });
    expect(events.at(-1)?.type).toBe('message.completed');
  });
});
