import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outboundFetch } from './outbound-fetch.js';
import { OutboundHttp, OutboundRequestError } from './outbound-http.js';
import { OutboundPolicy, systemResolver, type HostResolver } from './outbound-policy.js';

// A real server on loopback; each path is one behaviour.
const seen: { method: string; headers: IncomingMessage['headers']; body: string }[] = [];
let connections = 0;
// The streaming route sends its second part only when the test has read the first.
let releaseSecondPart = Promise.withResolvers<void>();
const routes: Record<string, (response: ServerResponse) => void> = {
  '/echo': (response) => response.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify(seen.at(-1))),
  '/moved': (response) => response.writeHead(307, { location: 'https://elsewhere.example.com/' }).end(),
  '/empty': (response) => response.writeHead(204).end(),
  '/big': (response) => response.end('x'.repeat(10_000)),
  '/stream': (response) => {
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    response.write('data: first\n\n');
    void releaseSecondPart.promise.then(() => response.end('data: second\n\n'));
  },
  '/endless': (response) => {
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    response.write(': open\n\n');
  },
};
const server = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    seen.push({ method: request.method ?? '', headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
    (routes[request.url ?? ''] ?? ((res: ServerResponse) => res.writeHead(404).end()))(response);
  });
});
server.on('connection', () => (connections += 1));
let base = '';
let port = 0;

const resolve: HostResolver = (hostname) => (hostname === 'receiver.example.com' ? Promise.resolve([{ address: '127.0.0.1', family: 4 }]) : systemResolver(hostname));
const relaxed = new OutboundHttp({ policy: new OutboundPolicy({ allowPrivateNetworks: true, resolve }), userAgent: 'Kit-Test/1.0' });
const strict = new OutboundHttp({ policy: new OutboundPolicy({ allowPrivateNetworks: false, resolve }), userAgent: 'Kit-Test/1.0' });
const fetch = outboundFetch(relaxed, { timeoutMs: 1_000, maxResponseBytes: 1_024 });

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

async function failure(promise: Promise<unknown>): Promise<OutboundRequestError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(OutboundRequestError);
  return error as OutboundRequestError;
}

describe('outboundFetch', () => {
  it('sends the method, headers and body, and answers a Response', async () => {
    const response = await fetch(new URL(`${base}/echo`), { method: 'post', headers: new Headers({ 'X-Token': 'abc' }), body: new TextEncoder().encode('{"a":1}') });
    expect(response.status).toBe(201);
    expect(response.headers.get('content-type')).toBe('application/json');
    const echoed = (await response.json()) as { method: string; headers: Record<string, string>; body: string };
    expect(echoed).toMatchObject({ method: 'POST', body: '{"a":1}', headers: { 'x-token': 'abc', 'user-agent': 'Kit-Test/1.0', 'content-length': '7' } });
  });

  it('hands over the body as it arrives', async () => {
    releaseSecondPart = Promise.withResolvers<void>();
    const response = await fetch(`${base}/stream`);
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    // The server holds its second part back until this first read is done.
    expect(decoder.decode((await reader.read()).value)).toBe('data: first\n\n');
    releaseSecondPart.resolve();
    let rest = '';
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) rest += decoder.decode(chunk.value);
    expect(rest).toBe('data: second\n\n');
  });

  it('does not follow a redirect, and gives bodiless statuses no body', async () => {
    const moved = await fetch(`${base}/moved`);
    expect(moved.status).toBe(307);
    expect(moved.headers.get('location')).toBe('https://elsewhere.example.com/');
    const empty = await fetch(`${base}/empty`, { method: 'DELETE' });
    expect(empty.status).toBe(204);
    expect(empty.body).toBeNull();
  });

  it('errors a body beyond the cap, and one that outlives the time-out', async () => {
    const big = await fetch(`${base}/big`);
    expect((await failure(big.text())).reason).toBe('too_large');
    const endless = await fetch(`${base}/endless`);
    expect((await failure(endless.text())).reason).toBe('timeout');
  });

  it("ends when the caller's signal aborts, before or during the body", async () => {
    const caller = new AbortController();
    const endless = await fetch(`${base}/endless`, { signal: caller.signal });
    const reading = endless.text();
    caller.abort();
    expect((await failure(reading)).reason).toBe('aborted');
    expect((await failure(fetch(`${base}/echo`, { signal: caller.signal }))).reason).toBe('aborted');
  });

  it('connects only where the policy allows', async () => {
    const guarded = outboundFetch(strict, { timeoutMs: 1_000, maxResponseBytes: 1_024 });
    const before = connections;
    expect((await failure(guarded(`http://receiver.example.com:${port}/echo`))).reason).toBe('blocked');
    expect((await failure(guarded(`${base}/echo`))).reason).toBe('blocked');
    expect(connections).toBe(before);
  });
});
