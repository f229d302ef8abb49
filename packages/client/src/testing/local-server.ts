import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  method: string;
  /** Path and query. */
  url: string;
  headers: IncomingHttpHeaders;
  /** The raw body, as sent. */
  body: string;
}

export interface LocalServer {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  readonly received: ReceivedRequest[];
  /** Resolves with the next request to arrive (or the first one not yet taken). */
  next(): Promise<ReceivedRequest>;
  close(): Promise<void>;
}

export type Handler = (request: ReceivedRequest, response: ServerResponse, raw: IncomingMessage) => void;

const json: Handler = (_request, response) => {
  response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
};

/** A node:http server on a free loopback port that records each request, then lets `handler` answer it. */
export async function startLocalServer(handler: Handler = json): Promise<LocalServer> {
  const received: ReceivedRequest[] = [];
  let taken = 0;
  const waiters: ((request: ReceivedRequest) => void)[] = [];
  const server = createServer((raw, response) => {
    const chunks: Buffer[] = [];
    raw.on('data', (chunk: Buffer) => chunks.push(chunk));
    raw.on('end', () => {
      const request = { method: raw.method ?? '', url: raw.url ?? '', headers: raw.headers, body: Buffer.concat(chunks).toString('utf8') };
      received.push(request);
      const waiter = waiters.shift();
      if (waiter) {
        taken += 1;
        waiter(request);
      }
      handler(request, response, raw);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    next() {
      const waiting = received[taken];
      if (waiting) {
        taken += 1;
        return Promise.resolve(waiting);
      }
      return new Promise((resolve) => waiters.push(resolve));
    },
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
