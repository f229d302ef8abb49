import { describe, expect, it } from 'vitest';
import { startReceiver } from '@agent-platform/kit/testing';
import { streamChat, streamToolCallDecision, type ChatStreamEvent } from './chat-stream.js';
import { ApiResponseError, createClient } from './client.js';
import type { ChatMessage } from './types.js';

const REPLY: ChatMessage = {
  id: 'msg_01',
  role: 'assistant',
  content: 'Grüße 👋 from the agent',
  status: 'completed',
  tool_calls: [],
  usage: { prompt_tokens: 10, completion_tokens: 6, total_tokens: 16 },
  credits: 1,
  memories: [],
  citations: [],
  session_id: 'ses_01',
  run_id: 'run_01',
  model: 'offline',
  created_at: '2026-01-02T03:04:05.006Z',
};

function sse(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

const WIRE = sse('message.delta', { content: 'Grüße 👋', run_id: 'run_01' }) + ': keep-alive\n\n' + sse('message.delta', { content: ' from the agent', run_id: 'run_01' }) + sse('message.completed', REPLY);

/** A fetch that answers every request with `chunks`, one per read, and records the request. */
function fetchAnswering(chunks: Uint8Array[], init: ResponseInit = { headers: { 'content-type': 'text/event-stream' } }) {
  const requests: Request[] = [];
  const fetchFn = (input: Request | string | URL, requestInit?: RequestInit) => {
    requests.push(new Request(input, requestInit));
    let index = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        const chunk = chunks[index++];
        if (chunk) controller.enqueue(chunk);
        else controller.close();
      },
    });
    return Promise.resolve(new Response(body, init));
  };
  return { fetch: fetchFn, requests };
}

/** `bytes` cut at each offset. */
function cut(bytes: Uint8Array, offsets: number[]): Uint8Array[] {
  return [0, ...offsets].map((start, index) => bytes.slice(start, offsets[index] ?? bytes.length));
}

async function collect(events: AsyncIterable<ChatStreamEvent>): Promise<ChatStreamEvent[]> {
  const collected: ChatStreamEvent[] = [];
  for await (const event of events) collected.push(event);
  return collected;
}

const EXPECTED: ChatStreamEvent[] = [
  { event: 'message.delta', data: { content: 'Grüße 👋', run_id: 'run_01' } },
  { event: 'message.delta', data: { content: ' from the agent', run_id: 'run_01' } },
  { event: 'message.completed', data: REPLY },
];

describe('streamChat', () => {
  it('posts stream: true through the client (its base URL, credential and fetch)', async () => {
    const answer = fetchAnswering([new TextEncoder().encode(WIRE)]);
    const client = createClient({ baseUrl: 'http://platform.test', apiKey: 'ap_live_key', fetch: answer.fetch });
    expect(await collect(streamChat(client, 'agt_01', { message: 'hi', session_id: 'ses_01' }))).toEqual(EXPECTED);
    const [request] = answer.requests;
    expect(request?.method).toBe('POST');
    expect(request?.url).toBe('http://platform.test/api/v1/agents/agt_01/chat');
    expect(request?.headers.get('authorization')).toBe('Bearer ap_live_key');
    expect(request?.headers.get('accept')).toBe('text/event-stream');
    expect(await request?.json()).toEqual({ message: 'hi', session_id: 'ses_01', stream: true });
  });

  it('reassembles an event split across chunks and a multi-byte character split across chunks', async () => {
    const bytes = new TextEncoder().encode(WIRE);
    const umlaut = bytes.indexOf(0xc3); // the first byte of ü's two
    const emoji = bytes.indexOf(0xf0); // the first byte of 👋's four
    const completed = WIRE.indexOf('event: message.completed');
    // Mid-ü, mid-👋, inside a `data:` line, between "\n" and "\n", and inside the field name.
    const offsets = [umlaut + 1, emoji + 2, emoji + 6, completed - 1, completed + 3];
    expect(new Set(offsets).size).toBe(offsets.length);
    const client = createClient({ baseUrl: 'http://platform.test', fetch: fetchAnswering(cut(bytes, offsets.sort((a, b) => a - b))).fetch });
    expect(await collect(streamChat(client, 'agt_01', { message: 'hi' }))).toEqual(EXPECTED);
  });

  it('reads the same events when every byte arrives alone, with CRLF line ends', async () => {
    const bytes = new TextEncoder().encode(WIRE.replaceAll('\n', '\r\n'));
    const client = createClient({ baseUrl: 'http://platform.test', fetch: fetchAnswering(cut(bytes, [...bytes.keys()].slice(1))).fetch });
    expect(await collect(streamChat(client, 'agt_01', { message: 'hi' }))).toEqual(EXPECTED);
  });

  it('yields a failure after the stream began as a final error event, and skips unknown event types', async () => {
    const failure = { error: 'upstream_error', message: 'The model did not answer' };
    const wire = sse('message.delta', { content: 'Half' }) + sse('usage.hint', { later: true }) + sse('error', failure);
    const client = createClient({ baseUrl: 'http://platform.test', fetch: fetchAnswering([new TextEncoder().encode(wire)]).fetch });
    expect(await collect(streamChat(client, 'agt_01', { message: 'hi' }))).toEqual([
      { event: 'message.delta', data: { content: 'Half' } },
      { event: 'error', data: failure },
    ]);
  });

  it('throws ApiResponseError for a failure before the stream began', async () => {
    const body = JSON.stringify({ error: 'not_found', message: 'Agent not found' });
    const answer = fetchAnswering([new TextEncoder().encode(body)], { status: 404, headers: { 'content-type': 'application/json' } });
    const client = createClient({ baseUrl: 'http://platform.test', fetch: answer.fetch });
    const failed = collect(streamChat(client, 'agt_missing', { message: 'hi' }));
    await expect(failed).rejects.toBeInstanceOf(ApiResponseError);
    await expect(failed).rejects.toMatchObject({ status: 404, apiError: { error: 'not_found', message: 'Agent not found' }, message: '404 not_found: Agent not found' });
  });
});

describe('streamToolCallDecision', () => {
  it('posts the decision with stream: true to the call, and yields the tool events with the rest of the turn', async () => {
    const call = { id: 'call_01', name: 'refund', arguments: { n: 5 } };
    const wire = sse('tool.call', call) + sse('tool.result', { id: 'call_01', status: 'completed', result: { ok: true } }) + sse('message.completed', REPLY);
    for (const decision of ['approve', 'reject'] as const) {
      const answer = fetchAnswering([new TextEncoder().encode(wire)]);
      const client = createClient({ baseUrl: 'http://platform.test', apiKey: 'ap_live_key', fetch: answer.fetch });
      const events = await collect(streamToolCallDecision(client, { agentId: 'agt_01', sessionId: 'ses_01', callId: 'call_01' }, decision, { comment: 'fine' }));
      expect(events).toEqual([
        { event: 'tool.call', data: call },
        { event: 'tool.result', data: { id: 'call_01', status: 'completed', result: { ok: true } } },
        { event: 'message.completed', data: REPLY },
      ]);
      const [request] = answer.requests;
      expect(request?.url).toBe(`http://platform.test/api/v1/agents/agt_01/sessions/ses_01/tool-calls/call_01/${decision}`);
      expect(await request?.json()).toEqual({ comment: 'fine', stream: true });
    }
  });
});

describe('leaving a streamChat loop early', () => {
  /** A server that sends one delta and then holds the stream open; `closed` resolves once the client has left it. */
  async function holdingServer() {
    const server = await startReceiver({ headers: { 'content-type': 'text/event-stream' }, body: sse('message.delta', { content: 'The first piece' }), hold: 'end' });
    return {
      url: server.url(),
      closed: () => server.waitFor(([request]) => request?.abandonedAt !== undefined),
    };
  }

  it('closes the connection when the caller breaks', async () => {
    const held = await holdingServer();
    const client = createClient({ baseUrl: held.url, accessToken: 'token' });
    const seen: ChatStreamEvent[] = [];
    for await (const event of streamChat(client, 'agt_01', { message: 'A long answer, please' })) {
      seen.push(event);
      break;
    }
    expect(seen).toEqual([{ event: 'message.delta', data: { content: 'The first piece' } }]);
    // The server never ends the response: only the client's leaving closes the socket.
    await held.closed();
  });

  it('closes the connection when the caller aborts its signal', async () => {
    const held = await holdingServer();
    const client = createClient({ baseUrl: held.url, accessToken: 'token' });
    const aborter = new AbortController();
    const events = streamChat(client, 'agt_01', { message: 'A long answer, please' }, { signal: aborter.signal });
    expect((await events.next()).value).toMatchObject({ event: 'message.delta' });
    const pending = events.next();
    aborter.abort();
    await expect(pending).rejects.toThrow();
    await held.closed();
  });
});
