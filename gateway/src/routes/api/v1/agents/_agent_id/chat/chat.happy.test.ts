import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replyTo } from '../../../../../../testing/agent-memory-double.js';
import { as, newAccount, startHarness, type Harness } from '../../../../../../testing/harness.js';

let h: Harness;
beforeAll(async () => {
  // A general deadline shorter than the double's slow chat below: chat turns must not use it.
  h = await startHarness({ GRPC_DEADLINE_MS: '300' });
});
afterAll(async () => {
  await h.close();
});

const AGENT = 'agt_01JD0000000000000000000001';
const SESSION = 'ses_01JD0000000000000000000009';
const REPLY = {
  id: 'msg_01JD0000000000000000000002',
  role: 'assistant',
  usage: { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 },
  model: 'offline',
  created_at: '2026-01-02T03:04:05.006Z',
};

describe('POST /agents/{agent_id}/chat', () => {
  it('answers the reply as JSON and forwards the turn', async () => {
    const account = await newAccount(h.app);
    const answer = await as(h.app, account.token, { method: 'POST', url: `/api/v1/agents/${AGENT}/chat`, payload: { message: 'Hello there', session_id: SESSION } });
    expect(answer.statusCode, answer.body).toBe(200);
    expect(answer.headers['content-type']).toContain('application/json');
    expect(answer.json()).toEqual({ ...REPLY, content: 'You said: Hello there', session_id: SESSION });
    expect(h.agentMemory.lastRequest('chat')).toEqual({ agentId: AGENT, message: 'Hello there', sessionId: SESSION });
  });

  it('waits for a slow model past the general gRPC deadline (MODEL_DEADLINE_MS)', async () => {
    const account = await newAccount(h.app);
    h.agentMemory.chatDelayMs = 600;
    try {
      const answer = await as(h.app, account.token, { method: 'POST', url: `/api/v1/agents/${AGENT}/chat`, payload: { message: 'slow' } });
      expect(answer.statusCode, answer.body).toBe(200);
    } finally {
      h.agentMemory.chatDelayMs = 0;
    }
  });

  it('with stream: true relays the turn as server-sent events: deltas, then the completed reply', async () => {
    const account = await newAccount(h.app);
    const answer = await as(h.app, account.token, {
      method: 'POST',
      url: `/v1/agents/${AGENT}/chat`,
      headers: { 'x-request-id': 'sse-req-1' },
      payload: { message: 'Hi you', stream: true },
    });
    expect(answer.statusCode).toBe(200);
    expect(answer.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(answer.headers['cache-control']).toBe('no-cache');
    // The headers every response carries survive the stream.
    expect(answer.headers['x-request-id']).toBe('sse-req-1');
    expect(answer.headers['x-ratelimit-limit']).toBeDefined();
    expect(answer.headers['x-ratelimit-remaining']).toBeDefined();
    const completed = { ...replyTo('Hi you', undefined), usage: REPLY.usage };
    expect(answer.body).toBe(
      [
        'event: message.delta\ndata: {"content":"You "}\n\n',
        'event: message.delta\ndata: {"content":"said: "}\n\n',
        'event: message.delta\ndata: {"content":"Hi "}\n\n',
        'event: message.delta\ndata: {"content":"you"}\n\n',
        `event: message.completed\ndata: ${JSON.stringify({
          id: completed.id,
          role: 'assistant',
          content: 'You said: Hi you',
          usage: REPLY.usage,
          session_id: completed.sessionId,
          model: 'offline',
          created_at: REPLY.created_at,
        })}\n\n`,
      ].join(''),
    );
    expect(h.agentMemory.lastRequest('streamChat')).toEqual({ agentId: AGENT, message: 'Hi you' });
  });

  it('with stream: false answers JSON', async () => {
    const account = await newAccount(h.app);
    const answer = await as(h.app, account.token, { method: 'POST', url: `/api/v1/agents/${AGENT}/chat`, payload: { message: 'x', stream: false } });
    expect(answer.headers['content-type']).toContain('application/json');
  });
});
