import { describe, expect, it } from 'vitest';
import { freePort, startReceiver, type Answer, type ReceivedRequest } from '@agent-platform/kit/testing';
import { IntegrationError } from '../../src/integrations/integration.js';
import { MAX_HTTP_RESPONSE_BYTES, runHttp } from '../../src/integrations/http-integration.js';
import { context, outboundHttp, rejectionOf } from './outbound.js';

function reply(status: number, contentType: string, body: string | Uint8Array): Answer {
  return { status, headers: { 'content-type': contentType }, body };
}

/** The peer most tests talk to; each path is one behaviour of a real API. */
function api(request: ReceivedRequest): Answer {
  switch (request.path.split('?')[0]) {
    case '/echo':
      return reply(201, 'application/json; charset=utf-8', JSON.stringify({ method: request.method, body: request.body, type: request.headers['content-type'] ?? null }));
    case '/text':
      return reply(200, 'text/plain; charset=utf-8', 'plain words');
    case '/latin1':
      return reply(200, 'text/plain; charset=iso-8859-1', Buffer.from('caf\u00e9', 'latin1'));
    case '/problem':
      return reply(200, 'application/problem+json', '{"title":"fine"}');
    case '/not-json':
      return reply(200, 'application/json', 'this is not JSON');
    case '/fail':
      return reply(500, 'application/json', JSON.stringify({ error: 'database is down', detail: 'x'.repeat(1_000) }));
    case '/moved':
      return { status: 302, headers: { location: '/target' } };
    case '/big-text':
      return reply(200, 'text/plain', 'a'.repeat(MAX_HTTP_RESPONSE_BYTES + 10));
    case '/big-json':
      return reply(200, 'application/json', JSON.stringify({ data: 'a'.repeat(MAX_HTTP_RESPONSE_BYTES) }));
    case '/silent':
      return { hold: 'answer' }; // never answers
    default:
      return reply(200, 'text/plain', 'ok');
  }
}

describe('http integration: requests', () => {
  it('sends a JSON value as JSON and parses a JSON answer', async () => {
    const peer = await startReceiver(api);
    const output = await runHttp(outboundHttp(), { url: peer.url('/echo'), method: 'POST', headers: { 'X-Trace': 'abc' }, body: { name: 'Ada', tags: [1, 2] } }, context());
    expect(output.status).toBe(201);
    expect(output.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(output.body).toEqual({ method: 'POST', body: '{"name":"Ada","tags":[1,2]}', type: 'application/json' });
    expect(peer.requests[0]!.headers).toMatchObject({ 'x-trace': 'abc', 'user-agent': 'AgentPlatform-Workflows/test' });
  });

  it("sends a string as is, and keeps the user's content type", async () => {
    const peer = await startReceiver(api);
    const http = outboundHttp();
    const plain = await runHttp(http, { url: peer.url('/echo'), method: 'PUT', headers: {}, body: 'a,b\n1,2' }, context());
    expect(plain.body).toEqual({ method: 'PUT', body: 'a,b\n1,2', type: null });
    const typed = await runHttp(http, { url: peer.url('/echo'), method: 'PATCH', headers: { 'Content-Type': 'application/merge-patch+json' }, body: { a: null } }, context());
    expect(typed.body).toEqual({ method: 'PATCH', body: '{"a":null}', type: 'application/merge-patch+json' });
  });

  it('sends GET and DELETE without a body', async () => {
    const peer = await startReceiver(api);
    const http = outboundHttp();
    for (const method of ['GET', 'DELETE'] as const) {
      const output = await runHttp(http, { url: peer.url('/echo'), method, headers: {}, body: { ignored: true } }, context());
      expect(output.body).toEqual({ method, body: '', type: null });
    }
  });

  it('returns text for what is not JSON, in its charset, and JSON media types parsed', async () => {
    const peer = await startReceiver(api);
    const http = outboundHttp();
    const get = (path: string) => runHttp(http, { url: peer.url(path), method: 'GET', headers: {} }, context());
    expect(await get('/text')).toMatchObject({ status: 200, body: 'plain words' });
    expect((await get('/latin1')).body).toBe('caf\u00e9');
    expect((await get('/problem')).body).toEqual({ title: 'fine' });
    expect((await get('/not-json')).body).toBe('this is not JSON');
  });

  it('keeps the first 1 MiB of a larger text, and fails on a JSON answer it cannot read whole', async () => {
    const peer = await startReceiver(api);
    const http = outboundHttp();
    const text = await runHttp(http, { url: peer.url('/big-text'), method: 'GET', headers: {} }, context());
    expect(text.body).toBe('a'.repeat(MAX_HTTP_RESPONSE_BYTES));
    const error = await rejectionOf(runHttp(http, { url: peer.url('/big-json'), method: 'GET', headers: {} }, context()));
    expect(error).toBeInstanceOf(IntegrationError);
    expect(error.message).toBe(`the JSON response from ${peer.host} is larger than 1 MiB`);
  });
});

describe('http integration: failures', () => {
  it('fails on a non-2xx, naming the status and host and quoting at most 200 characters of the answer', async () => {
    const peer = await startReceiver(api);
    const error = await rejectionOf(runHttp(outboundHttp(), { url: peer.url('/fail?api_key=SECRET'), method: 'POST', headers: {}, body: {} }, context()));
    expect(error).toBeInstanceOf(IntegrationError);
    expect(error.message).toMatch(new RegExp(`^HTTP 500 from ${peer.host}: \\{"error":"database is down","detail":"x+…$`));
    expect(error.message.length).toBeLessThanOrEqual(`HTTP 500 from ${peer.host}: `.length + 200);
    expect(error.message).not.toContain('SECRET');
    expect(error.stack).not.toMatch(/\n\s+at /);
  });

  it('does not follow a redirect: the node fails and the target is never asked', async () => {
    const peer = await startReceiver(api);
    const http = outboundHttp();
    const error = await rejectionOf(runHttp(http, { url: peer.url('/moved'), method: 'GET', headers: {} }, context()));
    expect(error.message).toBe(`HTTP 302 from ${peer.host}: redirects are not followed`);
    await runHttp(http, { url: peer.url('/sentinel'), method: 'GET', headers: {} }, context());
    expect(peer.requests.map((request) => request.path)).toEqual(['/moved', '/sentinel']);
  });

  it('times out after the node time-out when the peer never answers', async () => {
    const peer = await startReceiver(api);
    const started = performance.now();
    const error = await rejectionOf(runHttp(outboundHttp(), { url: peer.url('/silent'), method: 'GET', headers: {} }, context({ timeoutMs: 300 })));
    expect(error).toBeInstanceOf(IntegrationError);
    expect(error.message).toBe('timed out after 300 ms');
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it('stops at once when the execution is cancelled mid-request', async () => {
    const peer = await startReceiver(api);
    const controller = new AbortController();
    const pending = rejectionOf(runHttp(outboundHttp(), { url: peer.url('/silent'), method: 'GET', headers: {} }, context({ signal: controller.signal, timeoutMs: 30_000 })));
    await peer.waitFor(1, { match: '/silent' });
    const started = performance.now();
    controller.abort();
    const error = await pending;
    expect(error).toBeInstanceOf(IntegrationError);
    expect(error.message).toBe('aborted');
    expect(performance.now() - started).toBeLessThan(500);
  });

  it('names a network failure with the host only', async () => {
    const port = await freePort();
    const error = await rejectionOf(runHttp(outboundHttp(), { url: `http://127.0.0.1:${port}/path?token=SECRET`, method: 'GET', headers: {} }, context()));
    expect(error).toBeInstanceOf(IntegrationError);
    expect(error.message).toBe(`request to 127.0.0.1:${port} failed: connection refused`);
  });
});

describe('http integration: the SSRF guard', () => {
  it('refuses loopback, by address and by name, without a single connection reaching the peer', async () => {
    const peer = await startReceiver(api);
    const guarded = outboundHttp(false);
    const port = peer.host.split(':')[1]!;
    for (const [url, reason] of [
      [`http://127.0.0.1:${port}/internal`, /^refused to connect: must not point to a loopback address \(127\.0\.0\.1\)$/],
      [`http://localhost:${port}/internal`, /^refused to connect: localhost must not point to a loopback address/],
    ] as const) {
      const error = await rejectionOf(runHttp(guarded, { url, method: 'POST', headers: {}, body: { steal: true } }, context()));
      expect(error).toBeInstanceOf(IntegrationError);
      expect(error.message).toMatch(reason);
    }
    // The sentinel: an allowed request through a fresh pool arrives, and it is the only one that did.
    await runHttp(outboundHttp(true), { url: peer.url('/sentinel'), method: 'GET', headers: {} }, context());
    expect(peer.requests.map((request) => request.path)).toEqual(['/sentinel']);
    expect(peer.connections()).toBe(1);
  });
});
