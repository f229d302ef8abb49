import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { onTestFinished, vi } from 'vitest';

/** One request as the receiver saw it; `body` is the raw text, byte for byte. */
export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** ms since the epoch, when the body had fully arrived. */
  at: number;
}

export interface Reply {
  status: number;
  headers?: Record<string, string>;
  body?: string;
  /** Answer after this long. */
  delayMs?: number;
  /** Answer once this has settled too: a test holds a request until it has set something up. */
  until?: Promise<unknown>;
}

export type Responder = (request: ReceivedRequest) => Reply;

/** A real HTTP server on 127.0.0.1:0 that records every request and answers as told. */
export interface Receiver {
  readonly port: number;
  url(path?: string): string;
  readonly requests: ReceivedRequest[];
  /** Requests to `path`; all paths when omitted. */
  received(path?: string): ReceivedRequest[];
  /** The most requests ever in progress at once on `path`. */
  maxConcurrency(path: string): number;
  respond(responder: Responder): void;
  /** Waits until `count` requests to `path` (or at all) have arrived. */
  waitForRequests(count: number, path?: string, timeoutMs?: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

/** Starts a receiver that closes when the current test finishes. Default answer: 200 `ok`. */
export async function startReceiver(responder: Responder = () => ({ status: 200, body: 'ok' })): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  const inProgress = new Map<string, number>();
  const peak = new Map<string, number>();
  let respond = responder;
  const server: Server = createServer((request, response) => {
    const path = request.url ?? '/';
    const current = (inProgress.get(path) ?? 0) + 1;
    inProgress.set(path, current);
    peak.set(path, Math.max(peak.get(path) ?? 0, current));
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const received: ReceivedRequest = { method: request.method ?? '', path, headers: request.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
      requests.push(received);
      const reply = respond(received);
      const send = () => {
        inProgress.set(path, (inProgress.get(path) ?? 1) - 1);
        if (response.destroyed) return;
        response.writeHead(reply.status, reply.headers);
        response.end(reply.body ?? '');
      };
      const delayed = () => {
        if (reply.delayMs) setTimeout(send, reply.delayMs).unref();
        else send();
      };
      if (reply.until) void reply.until.finally(delayed);
      else delayed();
    });
  });
  // A dispatcher that gives up (time-out) resets the socket; that is expected, not a failure here.
  server.on('clientError', (_error, socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const received = (path?: string) => (path === undefined ? [...requests] : requests.filter((request) => request.path === path));
  const receiver: Receiver = {
    port,
    url: (path = '/hook') => `http://127.0.0.1:${port}${path}`,
    requests,
    received,
    maxConcurrency: (path) => peak.get(path) ?? 0,
    respond: (next) => {
      respond = next;
    },
    async waitForRequests(count, path, timeoutMs = 10_000) {
      await vi.waitFor(
        () => {
          if (received(path).length < count) throw new Error(`${received(path).length} of ${count} requests so far`);
        },
        { timeout: timeoutMs, interval: 20 },
      );
      return received(path);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  onTestFinished(() => receiver.close());
  return receiver;
}
