import { request as httpRequest } from 'node:http';
import { describe, expect, it } from 'vitest';
import { startReceiver, type Answer } from './receiver.js';

/** A request through node:http (fetch pools and retries connections, which would blur the counts). */
function send(url: string, init: { method?: string; headers?: Record<string, string>; body?: string; signal?: AbortSignal } = {}) {
  return new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }>((resolve, reject) => {
    const outgoing = httpRequest(url, { method: init.method ?? 'POST', headers: init.headers, signal: init.signal, agent: false }, (incoming) => {
      const chunks: Buffer[] = [];
      incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
      incoming.on('end', () => resolve({ status: incoming.statusCode ?? 0, headers: incoming.headers, body: Buffer.concat(chunks).toString('utf8') }));
      incoming.on('error', reject);
    });
    outgoing.on('error', reject);
    outgoing.end(init.body);
  });
}

describe('startReceiver', () => {
  it('records method, path and query, headers, the raw body, parsed JSON and the time', async () => {
    const receiver = await startReceiver();
    const before = Date.now();
    const answered = await send(receiver.url('/hooks?all'), { headers: { 'content-type': 'application/json', 'x-trace': 'abc' }, body: '{"a": 1}' });
    expect(answered).toMatchObject({ status: 200, body: '{"ok":true}', headers: { 'content-type': 'application/json' } });
    await send(receiver.url('/text'), { method: 'PUT', headers: { 'content-type': 'text/plain' }, body: '{"not":"parsed"}' });
    const [json, text] = receiver.requests;
    expect(json).toMatchObject({ method: 'POST', path: '/hooks?all', body: '{"a": 1}', json: { a: 1 }, abandonedAt: undefined });
    expect(json!.headers['x-trace']).toBe('abc');
    expect(json!.receivedAt).toBeGreaterThanOrEqual(before);
    expect(text).toMatchObject({ method: 'PUT', path: '/text', json: undefined });
    expect(receiver.received('/text')).toEqual([text]);
    expect(receiver.received((request) => request.method === 'POST')).toEqual([json]);
    expect(receiver.connections()).toBe(2);
  });

  it('answers as told, per request: status, headers, bytes, JSON, a delay, a cut connection', async () => {
    const receiver = await startReceiver((request): Answer => {
      if (request.path === '/moved') return { status: 301, headers: { location: '/elsewhere' } };
      if (request.path === '/latin1') return { headers: { 'content-type': 'text/plain; charset=iso-8859-1' }, body: Buffer.from('caf\u00e9', 'latin1') };
      if (request.path === '/slow') return { status: 202, delayMs: 50 };
      if (request.path === '/dead') return { destroy: true };
      return { status: 201, json: { echo: request.json } };
    });
    expect(await send(receiver.url('/moved'))).toMatchObject({ status: 301, headers: { location: '/elsewhere' } });
    expect((await send(receiver.url('/latin1'))).body).toBe('caf\uFFFD');
    const started = Date.now();
    expect((await send(receiver.url('/slow'))).status).toBe(202);
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
    await expect(send(receiver.url('/dead'))).rejects.toThrow(/socket hang up|ECONNRESET/);
    expect(await send(receiver.url('/echo'), { headers: { 'content-type': 'application/json' }, body: '[1]' })).toMatchObject({ status: 201, body: '{"echo":[1]}' });
    receiver.answer({ status: 503 });
    expect((await send(receiver.url('/echo'))).status).toBe(503);
  });

  it('waitFor resolves the moment the fact holds, with the matching requests', async () => {
    const receiver = await startReceiver();
    const three = receiver.waitFor(3, { match: '/a' });
    const large = receiver.waitFor((requests) => requests.some((request) => request.body.length > 3));
    await send(receiver.url('/a'), { body: '1' });
    await send(receiver.url('/b'), { body: '2' });
    await send(receiver.url('/a'), { body: '3' });
    await send(receiver.url('/a'), { body: 'four' });
    expect((await three).map((request) => request.body)).toEqual(['1', '3', 'four']);
    expect(await large).toHaveLength(4);
    // A fact that already holds resolves at once.
    expect(await receiver.waitFor(1, { match: '/b', timeoutMs: 1 })).toHaveLength(1);
  });

  it('waitFor rejects on its time-out, listing what did arrive', async () => {
    const receiver = await startReceiver();
    await send(receiver.url('/arrived'), { body: 'the first body' });
    await send(receiver.url('/other'), { body: 'the second body' });
    const waiting = receiver.waitFor(2, { match: '/arrived', timeoutMs: 50 });
    await expect(waiting).rejects.toThrow(/^waited 50 ms for 2 request\(s\) to \/arrived; 1 matched of 2 that arrived:\n {2}\+\d+ ms POST \/arrived the first body\n {2}\+\d+ ms POST \/other the second body$/);
  });

  it('holds an answer until released, and sees a client leave a held request', async () => {
    const receiver = await startReceiver((request) => (request.path === '/held' ? { status: 204, hold: 'answer' } : { status: 200 }));
    let answered = false;
    const pending = send(receiver.url('/held')).then((response) => ((answered = true), response));
    await receiver.waitFor(1, { match: '/held' });
    // A later request through the same receiver is the marker: once it is answered, so would the held one be.
    await send(receiver.url('/marker'));
    expect(answered).toBe(false);
    expect(receiver.release('/held')).toBe(1);
    expect((await pending).status).toBe(204);
    expect(receiver.release()).toBe(0);

    const leaving = new AbortController();
    const abandoned = send(receiver.url('/held'), { signal: leaving.signal });
    await receiver.waitFor(2, { match: '/held' });
    leaving.abort();
    await expect(abandoned).rejects.toThrow();
    const [, left] = await receiver.waitFor((requests) => requests[1]?.abandonedAt !== undefined, { match: '/held' });
    expect(left!.abandonedAt).toBeGreaterThanOrEqual(left!.receivedAt);
    expect(receiver.release()).toBe(0);
  });

  it("holds a stream open after its head and body until released ('end')", async () => {
    const receiver = await startReceiver({ headers: { 'content-type': 'text/event-stream' }, body: 'data: first\n\n', hold: 'end' });
    const response = await fetch(receiver.url('/stream'));
    const reader = response.body!.getReader();
    const first = (await reader.read()).value as Uint8Array | undefined;
    expect(new TextDecoder().decode(first)).toBe('data: first\n\n');
    expect(receiver.release()).toBe(1);
    expect((await reader.read()).done).toBe(true);
  });

  it('counts the requests to one path in progress at once', async () => {
    const receiver = await startReceiver({ hold: 'answer' });
    const both = Promise.all([send(receiver.url('/p')), send(receiver.url('/p'))]);
    await receiver.waitFor(2);
    receiver.release();
    await both;
    receiver.answer({ status: 200 });
    await send(receiver.url('/p'));
    expect(receiver.maxConcurrency('/p')).toBe(2);
    expect(receiver.maxConcurrency('/never')).toBe(0);
  });
});
