import { streamChat, type AgentPlatformClient, type ChatMessage, type ChatRequest, type ChatStreamEvent } from '@agent-platform/client';
import { describe, expect, it } from 'vitest';
import { Api, ISO_MS, id, newAccount } from './harness/client.js';
import { expectError, expectStatus, refusalOf } from './harness/results.js';
import { allEvents, EventStreamParser, postForEvents, type SseEvent } from './harness/sse.js';

// Without memory extraction (decisions §14.2): its model calls are charged too, after the reply.
async function createAgent(client: AgentPlatformClient): Promise<string> {
  return expectStatus(await client.POST('/api/v1/agents', { body: { name: 'Streamer', type: 'assistant', config: { memory_extraction: false } } }), 201).id;
}

/** A streamed turn through the client, read to its end. */
async function streamTurn(client: AgentPlatformClient, agentId: string, body: ChatRequest): Promise<ChatStreamEvent[]> {
  const events: ChatStreamEvent[] = [];
  for await (const event of streamChat(client, agentId, body)) events.push(event);
  return events;
}

function completion(events: ChatStreamEvent[]): ChatMessage {
  const last = events.at(-1);
  if (last?.event !== 'message.completed') throw new Error(`the stream ended with ${JSON.stringify(last)}`);
  return last.data;
}

function replyShape(reply: ChatMessage) {
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
    const agentId = await createAgent(account.client);
    // Raw, with the harness's own WHATWG parser: this checks the wire itself (headers, framing, that
    // no other event types are sent), which the client's parsing would hide.
    const response = await postForEvents(api, `/api/v1/agents/${agentId}/chat`, { token: account.accessToken, json: { message: 'Tell me about streaming.', stream: true } });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(response.headers.get('x-request-id')).toBeTruthy();
    expect(response.headers.get('x-ratelimit-limit')).toBeTruthy();
    const events = await allEvents(response.events!);

    const deltas = events.filter((event) => event.type === 'message.delta');
    const completed = events.filter((event) => event.type === 'message.completed');
    expect(deltas.length).toBeGreaterThan(1);
    expect(completed).toHaveLength(1);
    expect(events.at(-1)?.type).toBe('message.completed');
    expect(events.map((event) => event.type).filter((type) => type !== 'message.delta' && type !== 'message.completed')).toEqual([]);

    const pieces = deltas.map((event) => JSON.parse(event.data) as { content: string; run_id: string });
    const reply = JSON.parse(completed[0]!.data) as ChatMessage;
    // Every event names the turn's run (decisions §16).
    for (const piece of pieces) expect(piece).toEqual({ content: expect.any(String), run_id: reply.run_id });
    expect(pieces.map((piece) => piece.content).join('')).toBe(reply.content);
    expect(reply).toEqual({
      id: expect.stringMatching(id('msg')),
      role: 'assistant',
      content: expect.stringContaining('You said: "Tell me about streaming."'),
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
  });

  it('completes with the same JSON object a non-streamed turn answers, and is stored and charged alike', async () => {
    const { client } = await newAccount(new Api());
    const agentId = await createAgent(client);
    const plain = expectStatus(await client.POST('/api/v1/agents/{agent_id}/chat', { params: { path: { agent_id: agentId } }, body: { message: 'First, plainly.' } }));
    const balance = async () => expectStatus(await client.GET('/api/v1/billing/credits')).balance;
    const before = await balance();

    const events = await streamTurn(client, agentId, { message: 'Then streamed.', session_id: plain.session_id });
    const streamed = completion(events);
    expect(events.filter((event) => event.event === 'message.delta').map((event) => event.data.content).join('')).toBe(streamed.content);
    expect(replyShape(streamed)).toEqual(replyShape(plain));
    expect(streamed.session_id).toBe(plain.session_id);
    expect(streamed.content).toContain('This session has 1 earlier turn.');

    expect(before - (await balance())).toBe(Math.max(1, Math.ceil(streamed.usage.total_tokens / 1000)));
    const messages = expectStatus(
      await client.GET('/api/v1/agents/{agent_id}/sessions/{session_id}/messages', { params: { path: { agent_id: agentId, session_id: streamed.session_id } } }),
    );
    expect(messages.items.at(-1)).toEqual({
      id: streamed.id,
      role: 'assistant',
      content: streamed.content,
      usage: streamed.usage,
      status: 'completed',
      tool_calls: [],
      tool_call_id: null,
      name: null,
      model: streamed.model,
      credits: streamed.credits,
      memories: streamed.memories,
      citations: streamed.citations,
      run_id: streamed.run_id,
      created_at: streamed.created_at,
    });
  });

  it.each([
    ['an unknown agent', 'agt_01JD0000000000000000000000', { message: 'hi' }, 404, 'not_found'],
    ['an unknown session', undefined, { message: 'hi', session_id: 'ses_01JD0000000000000000000000' }, 404, 'not_found'],
    ['an empty message', undefined, { message: '' }, 422, 'validation_error'],
    ['a blank message', undefined, { message: '   \n ' }, 422, 'validation_error'],
    ['a message over 32,000 characters', undefined, { message: 'a'.repeat(32_001) }, 422, 'validation_error'],
  ] as const)('fails before the stream as plain JSON for %s', async (_label, agent, body, status, code) => {
    const { client } = await newAccount(new Api());
    const agentId = agent ?? (await createAgent(client));
    const refusal = await refusalOf(streamChat(client, agentId, body));
    expect(refusal.response.headers.get('content-type')).toMatch(/^application\/json/);
    expectError(refusal, status, code, code === 'validation_error' ? ['message'] : undefined);
  });

  it('can be left early by the client, and the next turn still works', async () => {
    const { client } = await newAccount(new Api());
    const agentId = await createAgent(client);
    let first: ChatStreamEvent | undefined;
    // Leaving the loop cancels the request, which closes the connection.
    for await (const event of streamChat(client, agentId, { message: 'A long answer, please. '.repeat(50) })) {
      first = event;
      break;
    }
    expect(first).toMatchObject({ event: 'message.delta' });
    expect(completion(await streamTurn(client, agentId, { message: 'Still there?' })).role).toBe('assistant');
  });
});
