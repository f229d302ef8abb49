import { createLogger, newId, type Actor } from '@agent-platform/kit';
import { OutboundHttp, OutboundPolicy, SecretBox } from '@agent-platform/kit/security';
import { freePort, startReceiver } from '@agent-platform/kit/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { RESULT_MAX_BYTES } from '../tool-result.js';
import { callsOfEveryKind, ToolRunner } from '../tool-runner.js';
import { sealedFor } from '../tool-secrets.js';
import { Tool } from '../tools.entity.js';
import { encodeArguments, httpCalls, type HttpMethod } from './http.js';
import type { ToolCallRequest, ToolCalls } from './tool-kind.js';

const secrets = new SecretBox([Buffer.alloc(32, 9)]);
// Loopback receivers need the development allowance; `strict` is the production policy.
const relaxed = new OutboundHttp({ policy: new OutboundPolicy({ allowPrivateNetworks: true }), userAgent: 'Tools-Test/1.0' });
const strict = new OutboundHttp({ policy: new OutboundPolicy({ allowPrivateNetworks: false }), userAgent: 'Tools-Test/1.0' });
afterAll(() => {
  relaxed.close();
  strict.close();
});
const kind = httpCalls({ http: relaxed, secrets, timeoutMs: 10_000 });
const actor: Actor = { kind: 'user', userId: newId('user'), tenantId: newId('tenant'), role: 'member', scopes: [] };

/** An http tool whose header values are sealed as ToolsService seals them. */
function httpTool(url: string, method: HttpMethod = 'POST', headers: Record<string, string> = {}): Tool {
  const id = newId('tool');
  const now = new Date();
  const sealed = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, secrets.seal(value, sealedFor(id, name))]));
  return Object.assign(new Tool(), {
    id,
    tenantId: actor.tenantId,
    name: 'lookup_order',
    description: null,
    type: 'http' as const,
    config: { url, method, headers: sealed },
    inputSchema: { type: 'object' },
    requiresApproval: false,
    createdAt: now,
    updatedAt: now,
  });
}

function requestOf(tool: Tool, args: Record<string, unknown>, signal = new AbortController().signal): ToolCallRequest {
  return { actor, tool, remoteName: undefined, arguments: args, signal, requestId: 'req_1' };
}

describe('http tools', () => {
  it('POSTs the arguments as JSON with the unsealed headers and answers the JSON it gets back', async () => {
    const peer = await startReceiver({ json: { order: 'A-1', status: 'shipped' } });
    const tool = httpTool(peer.url('/orders'), 'POST', { Authorization: 'Bearer sk-live-123', 'X-Tenant': 'acme' });
    const outcome = await kind.call(requestOf(tool, { order_id: 'A-1', lines: [{ sku: 'S', qty: 2 }] }));
    expect(outcome).toEqual({ status: 'completed', result: { order: 'A-1', status: 'shipped' } });
    const [received] = peer.requests;
    expect(received).toMatchObject({ method: 'POST', path: '/orders', json: { order_id: 'A-1', lines: [{ sku: 'S', qty: 2 }] } });
    expect(received!.headers).toMatchObject({ authorization: 'Bearer sk-live-123', 'x-tenant': 'acme', 'content-type': 'application/json', 'user-agent': 'Tools-Test/1.0' });
  });

  it("sends PUT, PATCH and DELETE arguments as the body too; the owner's content type stands", async () => {
    const peer = await startReceiver({ status: 204 });
    for (const method of ['PUT', 'PATCH', 'DELETE'] as const) {
      expect(await kind.call(requestOf(httpTool(peer.url('/x'), method, { 'Content-Type': 'application/vnd.api+json' }), { a: 1 }))).toEqual({ status: 'completed', result: '' });
    }
    expect(peer.requests.map((request) => [request.method, request.body, request.headers['content-type']])).toEqual([
      ['PUT', '{"a":1}', 'application/vnd.api+json'],
      ['PATCH', '{"a":1}', 'application/vnd.api+json'],
      ['DELETE', '{"a":1}', 'application/vnd.api+json'],
    ]);
  });

  it("GETs with the arguments in the query after the URL's own parameters: strings as they are, other values as JSON", async () => {
    const peer = await startReceiver({ json: [] });
    const tool = httpTool(`${peer.url('/search')}?api_version=2&sig=a%2Bb#fragment`, 'GET');
    await kind.call(requestOf(tool, { q: 'shoes & socks', n: 2, in_stock: true, tags: ['a', 'b'], filter: { max: 10 }, none: null }));
    const [received] = peer.requests;
    expect(received!.body).toBe('');
    expect(received!.headers['content-type']).toBeUndefined();
    // The owner's parameters are kept byte for byte (`%2B` is not re-encoded) and come first.
    expect(received!.path.startsWith('/search?api_version=2&sig=a%2Bb&q=')).toBe(true);
    const query = new URL(received!.path, 'http://x').searchParams;
    expect([...query.keys()]).toEqual(['api_version', 'sig', 'q', 'n', 'in_stock', 'tags', 'filter', 'none']);
    expect(Object.fromEntries(query)).toMatchObject({ q: 'shoes & socks', n: '2', in_stock: 'true', tags: '["a","b"]', filter: '{"max":10}', none: 'null' });
  });

  it('answers a body that is not JSON as text, and JSON as JSON whatever its content type says', async () => {
    const peer = await startReceiver((request) => (request.path === '/text' ? { body: 'shipped on Monday', headers: { 'content-type': 'text/plain' } } : { body: '{"n":1}', headers: { 'content-type': 'text/plain' } }));
    expect(await kind.call(requestOf(httpTool(peer.url('/text')), {}))).toEqual({ status: 'completed', result: 'shipped on Monday' });
    expect(await kind.call(requestOf(httpTool(peer.url('/json')), {}))).toEqual({ status: 'completed', result: { n: 1 } });
  });

  it('cuts a body over 64 KiB: the beginning as text, flagged, never a character cut in two', async () => {
    // 2-byte characters, and the limit falls inside one: 'é' is 0xC3 0xA9.
    const peer = await startReceiver({ body: `x${'é'.repeat(60_000)}`, headers: { 'content-type': 'application/json' } });
    const outcome = await kind.call(requestOf(httpTool(peer.url('/big')), {}));
    expect(outcome.status).toBe('completed');
    const result = (outcome as { result: { truncated: boolean; text: string } }).result;
    expect(result.truncated).toBe(true);
    expect(result.text).toMatch(/^xé+$/);
    expect(Buffer.byteLength(JSON.stringify(result))).toBeLessThanOrEqual(RESULT_MAX_BYTES);
    expect(Buffer.byteLength(result.text)).toBeGreaterThan(RESULT_MAX_BYTES - 64);
  });

  it('a non-2xx answer is a failed call naming the status and quoting the start of the body', async () => {
    const peer = await startReceiver((request) =>
      request.path === '/down' ? { status: 503, body: `upstream\n  is down ${'!'.repeat(500)}` } : request.path === '/gone' ? { status: 404 } : { status: 302, headers: { location: '/elsewhere' } },
    );
    const down = await kind.call(requestOf(httpTool(peer.url('/down')), {}));
    expect(down).toEqual({ status: 'failed', error: `HTTP 503: upstream is down ${'!'.repeat(200 - 'upstream is down '.length)}` });
    expect(await kind.call(requestOf(httpTool(peer.url('/gone')), {}))).toEqual({ status: 'failed', error: 'HTTP 404' });
    expect(await kind.call(requestOf(httpTool(peer.url('/moved')), {}))).toEqual({ status: 'failed', error: 'HTTP 302: redirects are not followed' });
    expect(peer.received('/elsewhere')).toHaveLength(0);
  });

  it('without the allowance, a loopback address is refused before any connection', async () => {
    const peer = await startReceiver();
    const guarded = httpCalls({ http: strict, secrets, timeoutMs: 10_000 });
    for (const url of [peer.url('/orders'), `http://localhost:${peer.port}/orders`]) {
      const outcome = await guarded.call(requestOf(httpTool(url), {}));
      expect(outcome).toMatchObject({ status: 'failed', error: expect.stringMatching(/is not allowed: refused to connect: .*loopback/) });
    }
    expect(peer.connections()).toBe(0);
  });

  it('a refused connection and header values that no longer open are failed calls saying so', async () => {
    const port = await freePort();
    expect(await kind.call(requestOf(httpTool(`http://127.0.0.1:${port}/x`), {}))).toEqual({ status: 'failed', error: `request to 127.0.0.1:${port} failed: connection refused` });
    const peer = await startReceiver();
    const tool = httpTool(peer.url('/x'), 'POST', { Authorization: 'Bearer a' });
    // Sealed for another tool: bound to its tool, the value does not open here.
    const moved = Object.assign(new Tool(), { ...tool, id: newId('tool') });
    expect(await kind.call(requestOf(moved, {}))).toMatchObject({ status: 'failed', error: expect.stringMatching(/^the tool's header values cannot be unsealed/) });
    expect(peer.requests).toHaveLength(0);
  });

  it('a server that never answers fails the call when its signal fires, and the connection is dropped', async () => {
    const peer = await startReceiver({ hold: 'answer' });
    const outcome = await kind.call(requestOf(httpTool(peer.url('/slow')), {}, AbortSignal.timeout(200)));
    expect(outcome).toEqual({ status: 'failed', error: `request to ${peer.host} timed out` });
    // The sentinel: the receiver saw the client leave.
    await peer.waitFor((requests) => requests[0]?.abandonedAt !== undefined);
  });

  it('through the ToolRunner, a hanging server fails at TOOL_TIMEOUT_MS', async () => {
    const peer = await startReceiver({ hold: 'answer' });
    const unused: ToolCalls = { call: () => Promise.reject(new Error('not this kind')) };
    const runner = new ToolRunner({ kinds: callsOfEveryKind((type) => (type === 'http' ? kind : unused)), principals: { confirm: (actor) => Promise.resolve(actor) }, timeoutMs: 200, logger: createLogger({ service: 'test', level: 'silent' }) });
    const tool = httpTool(peer.url('/slow'));
    const outcome = await runner.run({ actor, tool, remoteName: undefined, arguments: {}, signal: new AbortController().signal, requestId: undefined });
    expect(outcome).toMatchObject({ status: 'failed', error: 'timed out after 200 ms' });
    await peer.waitFor((requests) => requests[0]?.abandonedAt !== undefined);
  });
});

describe('encodeArguments', () => {
  it('leaves a GET URL without arguments as it was, fragment aside', () => {
    expect(encodeArguments({ url: 'https://api.example.com/a?b=c#d', method: 'GET' }, {})).toEqual({ url: 'https://api.example.com/a?b=c', body: undefined });
    expect(encodeArguments({ url: 'https://api.example.com/a', method: 'GET' }, { 'a b': 'c/d' })).toEqual({ url: 'https://api.example.com/a?a%20b=c%2Fd', body: undefined });
  });
});
