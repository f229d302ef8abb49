import type { LookupAddress } from 'node:dns';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { OutboundHttp, OutboundRequestError, type OutboundRequest } from './outbound-http.js';
import { OutboundPolicy, systemResolver, type HostResolver } from './outbound-policy.js';

interface Seen {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

// A real server on loopback; each path is one behaviour. It counts TCP connections as well as
// requests, so "nothing was sent" means not even a connection was opened.
const seen: Seen[] = [];
let connections = 0;
const routes: Record<string, (request: Seen, response: ServerResponse) => void> = {
  '/echo': (request, response) => {
    response.writeHead(200, { 'content-type': 'application/json', 'x-multi': ['a', 'b'] });
    response.end(JSON.stringify({ method: request.method, body: request.body.toString('utf8') }));
  },
  '/moved': (_request, response) => {
    response.writeHead(302, { location: '/elsewhere' });
    response.end();
  },
  '/big': (_request, response) => {
    response.writeHead(200, { 'content-type': 'text/plain' });
    response.end('x'.repeat(1_000_000));
  },
  '/exact': (_request, response) => response.end('0123456789'),
  '/silent': () => undefined,
  '/trickle': (_request, response) => {
    response.writeHead(200);
    const timer = setInterval(() => response.write('.'), 50);
    response.on('close', () => clearInterval(timer));
  },
};
const server = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const entry: Seen = { method: request.method ?? '', path: request.url ?? '', headers: request.headers, body: Buffer.concat(chunks) };
    seen.push(entry);
    (routes[entry.path] ?? ((_r, res: ServerResponse) => res.writeHead(404).end()))(entry, response);
  });
});
server.on('connection', () => (connections += 1));
let base = '';
let port = 0;

// Names under the test's control; everything else (localhost) goes to the system resolver.
const lookups: string[] = [];
const resolve: HostResolver = (hostname) => {
  lookups.push(hostname);
  const fixed: Record<string, LookupAddress[]> = { 'receiver.example.com': [{ address: '127.0.0.1', family: 4 }] };
  return fixed[hostname] ? Promise.resolve(fixed[hostname]) : systemResolver(hostname);
};
const relaxed = new OutboundHttp({ policy: new OutboundPolicy({ allowPrivateNetworks: true, resolve }), userAgent: 'Kit-Test/1.0' });
const strict = new OutboundHttp({ policy: new OutboundPolicy({ allowPrivateNetworks: false, resolve }), userAgent: 'Kit-Test/1.0' });

beforeAll(async () => {
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
});
afterAll(async () => {
  relaxed.close();
  strict.close();
  server.closeAllConnections();
  await new Promise<void>((done) => server.close(() => done()));
});

function get(path: string, extra: Partial<OutboundRequest> = {}): OutboundRequest {
  return { url: `${base}${path}`, method: 'GET', timeoutMs: 2_000, maxResponseBytes: 64 * 1024, ...extra };
}

async function rejection(promise: Promise<unknown>): Promise<OutboundRequestError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(OutboundRequestError);
  return error as OutboundRequestError;
}

describe('OutboundHttp: requests and responses', () => {
  it('sends the method, headers and body byte for byte, and returns status, headers and body', async () => {
    const body = Buffer.from('{"é":"ü"}', 'utf8');
    const response = await relaxed.request(get('/echo', { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Trace': 't1' }, body }));
    expect(response).toMatchObject({ status: 200, truncated: false });
    expect(response.headers).toMatchObject({ 'content-type': 'application/json', 'x-multi': 'a, b' });
    expect(JSON.parse(response.body.toString('utf8'))).toEqual({ method: 'POST', body: '{"é":"ü"}' });
    expect(response.timeMs).toBeGreaterThanOrEqual(0);
    const received = seen.at(-1)!;
    expect(received.headers).toMatchObject({ 'content-type': 'application/json', 'x-trace': 't1', 'user-agent': 'Kit-Test/1.0', 'content-length': String(body.length) });
    expect(received.body.equals(body)).toBe(true);
  });

  it("lets a request replace the user agent, and always sends the body's real length", async () => {
    await relaxed.request(get('/echo', { method: 'PUT', headers: { 'User-Agent': 'Custom/2', 'Content-Length': '999' }, body: 'abc' }));
    expect(seen.at(-1)!.headers).toMatchObject({ 'user-agent': 'Custom/2', 'content-length': '3' });
  });

  it('returns a 3xx as a response and does not follow it', async () => {
    const response = await relaxed.request(get('/moved'));
    expect(response).toMatchObject({ status: 302, headers: expect.objectContaining({ location: '/elsewhere' }) });
    await relaxed.request(get('/exact'));
    expect(seen.map((request) => request.path)).not.toContain('/elsewhere');
  });

  it('keeps at most maxResponseBytes of a body and says it was truncated', async () => {
    const big = await relaxed.request(get('/big', { maxResponseBytes: 1_000 }));
    expect(big).toMatchObject({ status: 200, truncated: true });
    expect(big.body).toHaveLength(1_000);
    const exact = await relaxed.request(get('/exact', { maxResponseBytes: 10 }));
    expect(exact).toMatchObject({ truncated: false });
    expect(exact.body.toString()).toBe('0123456789');
  });

  it('reuses a kept-alive connection, which was checked by the policy when it was opened', async () => {
    const client = new OutboundHttp({ policy: new OutboundPolicy({ allowPrivateNetworks: true, resolve }), userAgent: 'Kit-Test/1.0' });
    try {
      const [connectionsBefore, lookupsBefore] = [connections, lookups.length];
      const url = `http://receiver.example.com:${port}/exact`;
      for (let i = 0; i < 3; i += 1) expect((await client.request(get('', { url }))).status).toBe(200);
      expect(connections - connectionsBefore).toBe(1);
      expect(lookups.slice(lookupsBefore)).toEqual(['receiver.example.com']);
    } finally {
      client.close();
    }
  });
});

describe('OutboundHttp: failures', () => {
  it('times out over the whole request, a silent receiver or a trickling body alike', async () => {
    for (const path of ['/silent', '/trickle']) {
      const started = performance.now();
      const error = await rejection(relaxed.request(get(path, { timeoutMs: 300 })));
      const took = performance.now() - started;
      expect(error).toMatchObject({ reason: 'timeout', message: 'timed out after 300 ms' });
      expect(took).toBeGreaterThanOrEqual(290);
      expect(took).toBeLessThan(1_500);
    }
  });

  it("stops when the caller's signal aborts mid-request, and never starts when it already has", async () => {
    const controller = new AbortController();
    const pending = relaxed.request(get('/silent', { signal: controller.signal, timeoutMs: 10_000 }));
    await vi.waitFor(() => expect(seen.at(-1)?.path).toBe('/silent'));
    const started = performance.now();
    controller.abort();
    expect(await rejection(pending)).toMatchObject({ reason: 'aborted', message: 'aborted' });
    expect(performance.now() - started).toBeLessThan(500);

    const before = seen.length;
    expect(await rejection(relaxed.request(get('/echo', { signal: AbortSignal.abort() })))).toMatchObject({ reason: 'aborted' });
    await relaxed.request(get('/exact'));
    expect(seen.slice(before).map((request) => request.path)).toEqual(['/exact']);
  });

  it('refuses blocked addresses before connecting: IP literals, names, names that resolve to loopback', async () => {
    const [before, requestsBefore] = [connections, seen.length];
    const cases = [
      [`${base}/echo`, 'refused to connect: must not point to a loopback address (127.0.0.1)'],
      [`http://[::1]:${port}/echo`, 'refused to connect: must not point to a loopback address (::1)'],
      [`http://localhost:${port}/echo`, /^refused to connect: localhost must not point to a loopback address/],
      [`http://receiver.example.com:${port}/echo`, 'refused to connect: receiver.example.com must not point to a loopback address (127.0.0.1)'],
    ] as const;
    for (const [url, message] of cases) {
      const error = await rejection(strict.request(get('', { url })));
      expect(error.reason).toBe('blocked');
      expect(error.message).toMatch(message);
    }
    // The sentinel: an allowed request over a fresh pool is the only connection the server has seen since.
    const fresh = new OutboundHttp({ policy: new OutboundPolicy({ allowPrivateNetworks: true, resolve }), userAgent: 'Kit-Test/1.0' });
    try {
      await fresh.request(get('/sentinel'));
    } finally {
      fresh.close();
    }
    expect(connections - before).toBe(1);
    expect(seen.slice(requestsBefore).map((request) => request.path)).toEqual(['/sentinel']);
  });

  it('reports network failures in words', async () => {
    const closed = createServer();
    await new Promise<void>((done) => closed.listen(0, '127.0.0.1', done));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise<void>((done) => closed.close(() => done()));
    expect(await rejection(relaxed.request(get('', { url: `http://127.0.0.1:${closedPort}/` })))).toMatchObject({ reason: 'network', message: 'connection refused' });
    expect(await rejection(relaxed.request(get('', { url: 'http://nowhere.invalid/' })))).toMatchObject({ reason: 'network', message: 'the host name does not resolve' });
  });

  it('refuses what is not an http(s) URL or a valid request', async () => {
    expect(await rejection(relaxed.request(get('', { url: 'not a url' })))).toMatchObject({ reason: 'invalid_url' });
    expect(await rejection(relaxed.request(get('', { url: 'file:///etc/passwd' })))).toMatchObject({ reason: 'invalid_url', message: 'invalid URL: the scheme file is not http or https' });
    expect(await rejection(relaxed.request(get('/echo', { headers: { 'x-bad': 'a\r\nInjected: yes' } })))).toMatchObject({ reason: 'invalid_request' });
  });

  it('close() destroys the pooled sockets', async () => {
    const client = new OutboundHttp({ policy: new OutboundPolicy({ allowPrivateNetworks: true, resolve }), userAgent: 'Kit-Test/1.0' });
    let closedSockets = 0;
    const onConnection = (socket: Socket) => socket.on('close', () => (closedSockets += 1));
    server.on('connection', onConnection);
    try {
      await client.request(get('/exact'));
      expect(closedSockets).toBe(0);
      client.close();
      await vi.waitFor(() => expect(closedSockets).toBe(1));
    } finally {
      server.off('connection', onConnection);
    }
  });
});
