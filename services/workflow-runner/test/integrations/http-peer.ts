import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { onTestFinished, vi } from 'vitest';
import { OutboundHttp, OutboundPolicy } from '@agent-platform/kit/security';

/** One request as the peer read it. */
export interface PeerRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export type PeerHandler = (request: PeerRequest, response: ServerResponse) => void;

/** A real HTTP server on 127.0.0.1:0 that records requests and TCP connections. */
export interface HttpPeer {
  readonly host: string;
  url(path: string): string;
  readonly requests: PeerRequest[];
  /** TCP connections accepted so far: a request refused before connecting adds none. */
  connections(): number;
  waitForRequest(path: string): Promise<PeerRequest>;
}

/** Starts a peer that closes, with every connection, when the current test finishes. */
export async function startHttpPeer(handler: PeerHandler): Promise<HttpPeer> {
  const requests: PeerRequest[] = [];
  let connections = 0;
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const seen: PeerRequest = { method: request.method ?? '', path: request.url ?? '', headers: request.headers, body: Buffer.concat(chunks).toString('utf8') };
      requests.push(seen);
      handler(seen, response);
    });
  });
  server.on('connection', () => (connections += 1));
  // A client that gave up (time-out, abort) resets its socket; expected here.
  server.on('clientError', (_error, socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  onTestFinished(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return {
    host,
    url: (path) => `http://${host}${path}`,
    requests,
    connections: () => connections,
    async waitForRequest(path) {
      return vi.waitFor(
        () => {
          const found = requests.find((request) => request.path === path);
          if (!found) throw new Error(`no request to ${path} yet`);
          return found;
        },
        { timeout: 5_000, interval: 10 },
      );
    },
  };
}

/**
 * A guarded client closed when the test finishes. Tests reach their peers on loopback, so they
 * need the development allowance; `allowPrivateNetworks: false` is production's guard.
 */
export function outboundHttp(allowPrivateNetworks = true): OutboundHttp {
  const http = new OutboundHttp({ policy: new OutboundPolicy({ allowPrivateNetworks }), userAgent: 'AgentPlatform-Workflows/test' });
  onTestFinished(() => http.close());
  return http;
}

/** A context for one node: a fresh signal, and a time-out generous enough not to matter unless set. */
export function context(overrides: { signal?: AbortSignal; timeoutMs?: number } = {}): { signal: AbortSignal; timeoutMs: number } {
  return { signal: overrides.signal ?? new AbortController().signal, timeoutMs: overrides.timeoutMs ?? 5_000 };
}

/** The rejection of `promise` (failing the test when it resolves). */
export async function rejectionOf(promise: Promise<unknown>): Promise<Error> {
  const outcome = await promise.then(
    (value: unknown) => ({ value }),
    (error: unknown) => ({ error }),
  );
  if (!('error' in outcome)) throw new Error(`expected a rejection, got ${JSON.stringify(outcome.value)}`);
  if (!(outcome.error instanceof Error)) throw new Error(`expected an Error, got ${String(outcome.error)}`);
  return outcome.error;
}
