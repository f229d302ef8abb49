import { DomainError } from '@agent-platform/kit';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { chatTurn, newAgent } from '../support/agents.js';
import { as, bearer, expectError, newAccount, startHarness, type Account, type Harness } from '../support/harness.js';

let h: Harness;
let account: Account;
let chat: string;
beforeAll(async () => {
  // One credit each: an account's first turn spends its whole balance.
  h = await startHarness({ WELCOME_CREDITS: '1' });
  account = await newAccount(h.app);
  chat = `/api/v1/agents/${(await newAgent(h.app, account.token)).id}/chat`;
});
afterEach(() => {
  h.agentMemory.heal();
});
afterAll(async () => {
  await h.close();
});

/** The run the scripted turns name, as agent-memory's do on every event. */
const RUN_ID = 'run_01JD0000000000000000000000';

function stream(url = chat, message = 'hello', credential = account.token) {
  return as(h.app, credential, { method: 'POST', url, payload: { message, stream: true } });
}

/** A streamed turn over a real socket, so the client can go away. */
function streamOverSocket(message: string, signal: AbortSignal): Promise<Response> {
  return fetch(`${h.url}${chat}`, {
    method: 'POST',
    headers: { ...bearer(account.token), 'content-type': 'application/json' },
    body: JSON.stringify({ message, stream: true }),
    signal,
  });
}

describe('a failure before the first event is an ordinary JSON error response', () => {
  it('not_found for an absent agent', async () => {
    const answer = await stream('/api/v1/agents/agt_01JD0000000000000000000000/chat');
    expect(answer.headers['content-type']).toContain('application/json');
    expect(expectError(answer, 404, 'not_found').message).toBe('Agent not found.');
    expect(answer.headers['x-request-id']).toBeDefined();
  });

  it("validation_error for a message the service refuses (blank), naming it", async () => {
    const answer = await stream(chat, '   ');
    expect(answer.headers['content-type']).toContain('application/json');
    expectError(answer, 422, 'validation_error', ['message']);
  });

  it('insufficient_credits once the balance is spent', async () => {
    const spender = await newAccount(h.app);
    const agent = await newAgent(h.app, spender.token);
    await chatTurn(h.app, spender.token, agent.id, 'this spends the one credit');
    const answer = await stream(`/api/v1/agents/${agent.id}/chat`, 'one more', spender.token);
    expect(answer.headers['content-type']).toContain('application/json');
    expectError(answer, 402, 'insufficient_credits');
  });

  it('keeps the message of a DomainError the stream fails with', async () => {
    h.agentMemory.inject('StreamChat', { stream: [new DomainError('conflict', 'The session is busy.')] });
    const answer = await stream();
    expect(answer.headers['content-type']).toContain('application/json');
    expect(expectError(answer, 409, 'conflict').message).toBe('The session is busy.');
  });
});

describe('a failure after the stream began', () => {
  it('is one error event with the error body, 5xx text fixed, and the stream ends', async () => {
    h.agentMemory.inject('StreamChat', { stream: [{ delta: 'Partial ', runId: RUN_ID }, new DomainError('upstream_error', 'The model provider timed out after 60000 ms.')] });
    const answer = await stream();
    expect(answer.statusCode).toBe(200);
    expect(answer.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(answer.body).toBe(
      `event: message.delta\ndata: {"content":"Partial ","run_id":"${RUN_ID}"}\n\n` +
        'event: error\ndata: {"error":"upstream_error","message":"An upstream service failed; retry later."}\n\n',
    );
  });

  it('masks an unexpected failure as internal_error', async () => {
    h.agentMemory.inject('StreamChat', { stream: [{ delta: 'a', runId: RUN_ID }, new Error('connection to postgres://secret@db lost')] });
    const answer = await stream();
    expect(answer.body).toBe(
      `event: message.delta\ndata: {"content":"a","run_id":"${RUN_ID}"}\n\n` + 'event: error\ndata: {"error":"internal_error","message":"An unexpected error occurred."}\n\n',
    );
  });

  it('reports a stream that ends without its completed event', async () => {
    h.agentMemory.inject('StreamChat', { stream: [{ delta: 'only a piece', runId: RUN_ID }] });
    const answer = await stream();
    expect(answer.body).toBe(
      `event: message.delta\ndata: {"content":"only a piece","run_id":"${RUN_ID}"}\n\n` +
        'event: error\ndata: {"error":"internal_error","message":"An unexpected error occurred."}\n\n',
    );
  });
});

describe('a client that goes away', () => {
  it('cancels the gRPC call once the response is closed mid-stream', async () => {
    const cancelled = Promise.withResolvers<void>();
    h.agentMemory.inject('StreamChat', { stream: [{ delta: 'piece 0 ', runId: RUN_ID }], endless: true, onCancel: cancelled.resolve });
    const aborter = new AbortController();
    const response = await streamOverSocket('go on forever', aborter.signal);
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const first = (await response.body!.getReader().read()) as { value?: Uint8Array };
    expect(new TextDecoder().decode(first.value)).toBe(`event: message.delta\ndata: {"content":"piece 0 ","run_id":"${RUN_ID}"}\n\n`);
    aborter.abort();
    // Resolves only when the gateway cancels the call; otherwise the test's time-out fails it.
    await cancelled.promise;
  });

  it('cancels the gRPC call when the client left before the first event', async () => {
    const cancelled = Promise.withResolvers<void>();
    h.agentMemory.inject('StreamChat', { stream: [], endless: true, onCancel: cancelled.resolve });
    const reached = h.agentMemory.nextCall('StreamChat');
    const aborter = new AbortController();
    const request = streamOverSocket('slow to start', aborter.signal).catch((error: unknown) => error);
    await reached;
    aborter.abort();
    expect(await request).toMatchObject({ name: 'AbortError' });
    await cancelled.promise;
  });
});
