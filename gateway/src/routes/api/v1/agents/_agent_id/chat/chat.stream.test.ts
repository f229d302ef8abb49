import { setTimeout as sleep } from 'node:timers/promises';
import { DomainError } from '@agent-platform/kit';
import type { CallContext } from '@agent-platform/kit/grpc';
import type { StreamChatResponse } from '@agent-platform/proto/agents/v1/chat';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { scripted, wordsThenReply } from '../../../../../../testing/agent-memory-double.js';
import { as, bearer, expectError, newAccount, startHarness, type Account, type Harness } from '../../../../../../testing/harness.js';

let h: Harness;
let url: string;
beforeAll(async () => {
  h = await startHarness({ HOST: '127.0.0.1', PORT: '0' });
  ({ url } = await h.gateway.start());
});
afterEach(() => {
  h.agentMemory.streamChat = wordsThenReply;
});
afterAll(async () => {
  await h.close();
});

const CHAT = '/api/v1/agents/agt_01JD0000000000000000000001/chat';

function stream(account: Account, message = 'hello') {
  return as(h.app, account.token, { method: 'POST', url: CHAT, payload: { message, stream: true } });
}

describe('a failure before the first event', () => {
  it.each([
    ['insufficient_credits', new DomainError('insufficient_credits', 'No credits left.'), 402],
    ['not_found', DomainError.notFound('Agent'), 404],
    ['validation_error', DomainError.validation([{ field: 'message', message: 'must not be blank' }]), 422],
  ])('is an ordinary JSON error response (%s)', async (code, error, status) => {
    const account = await newAccount(h.app);
    h.agentMemory.streamChat = scripted([error]);
    const answer = await stream(account);
    expect(answer.headers['content-type']).toContain('application/json');
    const body = expectError(answer, status, code);
    expect(body.message).toBe(error.message);
    expect(answer.headers['x-request-id']).toBeDefined();
  });
});

describe('a failure after the stream began', () => {
  it('is one error event with the error body, and the stream ends', async () => {
    const account = await newAccount(h.app);
    h.agentMemory.streamChat = scripted([{ delta: 'Partial ' }, new DomainError('upstream_error', 'The model provider timed out after 60000 ms.')]);
    const answer = await stream(account);
    expect(answer.statusCode).toBe(200);
    expect(answer.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(answer.body).toBe(
      'event: message.delta\ndata: {"content":"Partial "}\n\n' +
        'event: error\ndata: {"error":"upstream_error","message":"An upstream service failed; retry later."}\n\n',
    );
  });

  it('masks an unexpected failure as internal_error', async () => {
    const account = await newAccount(h.app);
    h.agentMemory.streamChat = scripted([{ delta: 'a' }, new Error('connection to postgres://secret@db lost')]);
    const answer = await stream(account);
    expect(answer.body).toContain('event: error\ndata: {"error":"internal_error","message":"An unexpected error occurred."}\n\n');
    expect(answer.body).not.toContain('secret');
  });

  it('reports a stream that ends without its completed event', async () => {
    const account = await newAccount(h.app);
    h.agentMemory.streamChat = scripted([{ delta: 'only a piece' }]);
    const answer = await stream(account);
    expect(answer.body.endsWith('event: error\ndata: {"error":"internal_error","message":"An unexpected error occurred."}\n\n')).toBe(true);
  });
});

describe('a client that goes away', () => {
  /** A model that never finishes: a piece every 20 ms until the call is cancelled. */
  function endless(started: { resolve: () => void }, cancelled: { resolve: () => void }, firstDelayMs = 0) {
    return async function* (_request: unknown, ctx: CallContext): AsyncGenerator<StreamChatResponse> {
      started.resolve();
      ctx.signal.addEventListener('abort', () => cancelled.resolve());
      await sleep(firstDelayMs);
      for (let n = 0; !ctx.signal.aborted; n += 1) {
        yield { delta: `piece ${n} ` };
        await sleep(20);
      }
    };
  }

  function latch() {
    let resolve: () => void = () => undefined;
    const promise = new Promise<void>((done) => (resolve = done));
    return { promise, resolve };
  }

  it('cancels the gRPC call once the response is closed mid-stream', async () => {
    const account = await newAccount(h.app);
    const [started, cancelled] = [latch(), latch()];
    h.agentMemory.streamChat = endless(started, cancelled);
    const aborter = new AbortController();
    const response = await fetch(`${url}${CHAT}`, {
      method: 'POST',
      headers: { ...bearer(account.token), 'content-type': 'application/json' },
      body: JSON.stringify({ message: 'go on forever', stream: true }),
      signal: aborter.signal,
    });
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const reader = response.body!.getReader();
    const first = (await reader.read()) as { value?: Uint8Array };
    expect(new TextDecoder().decode(first.value)).toContain('event: message.delta');
    aborter.abort();
    await expect(Promise.race([cancelled.promise.then(() => 'cancelled'), sleep(3_000, 'still running')])).resolves.toBe('cancelled');
  });

  it('cancels the gRPC call when the client left before the first event', async () => {
    const account = await newAccount(h.app);
    const [started, cancelled] = [latch(), latch()];
    h.agentMemory.streamChat = endless(started, cancelled, 300);
    const aborter = new AbortController();
    const request = fetch(`${url}${CHAT}`, {
      method: 'POST',
      headers: { ...bearer(account.token), 'content-type': 'application/json' },
      body: JSON.stringify({ message: 'slow to start', stream: true }),
      signal: aborter.signal,
    }).catch((error: unknown) => error);
    await started.promise;
    aborter.abort();
    await request;
    await expect(Promise.race([cancelled.promise.then(() => 'cancelled'), sleep(3_000, 'still running')])).resolves.toBe('cancelled');
  });
});
