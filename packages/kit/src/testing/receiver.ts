import { EventEmitter } from 'node:events';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { onTestFinished } from 'vitest';

/** One request as the receiver read it. */
export interface ReceivedRequest {
  readonly method: string;
  /** Path and query, as sent: what tells the endpoints of one receiver apart. */
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  /** The raw body as UTF-8 text, byte for byte: signatures are computed over it. */
  readonly body: string;
  /** The body parsed, when its content type is JSON and it parses; undefined otherwise. */
  readonly json: unknown;
  /** ms since the epoch, when the body had fully arrived. */
  readonly receivedAt: number;
  /** ms since the epoch, when the client closed the connection before the answer had ended. */
  abandonedAt: number | undefined;
}

/** How the receiver answers one request. */
export interface Answer {
  /** Default 200. */
  status?: number;
  headers?: Record<string, string>;
  /** Sent as is. */
  body?: string | Uint8Array;
  /** Sent as JSON with its content type, instead of `body`. */
  json?: unknown;
  /** Answer this long after the request arrived (after its release, when held). */
  delayMs?: number;
  /**
   * 'answer': nothing is sent until `release()`; a peer that hangs, or a request kept waiting while
   * the test arranges what comes next. 'end': head and body go out at once but the response stays
   * open until `release()`; a stream the client has to leave by itself.
   */
  hold?: 'answer' | 'end';
  /** Cut the connection instead of answering: a peer that dies mid-request. */
  destroy?: boolean;
}

export type Answerer = (request: ReceivedRequest) => Answer;

/** Which requests a call is about: an exact path (with its query), or a test of each request. */
export type RequestMatch = string | ((request: ReceivedRequest) => boolean);

export interface WaitOptions {
  match?: RequestMatch;
  /** Default 10 s: long enough for a loaded two-core machine, short of the test's own time-out. */
  timeoutMs?: number;
}

/** A real HTTP server on 127.0.0.1:0 that records every request and answers as the test says. */
export interface Receiver {
  readonly port: number;
  /** `127.0.0.1:<port>`. */
  readonly host: string;
  url(path?: string): string;
  /** Every request so far, in arrival order. */
  readonly requests: readonly ReceivedRequest[];
  received(match?: RequestMatch): ReceivedRequest[];
  /**
   * Resolves, with the matching requests, the moment `count` of them have arrived or `fact` holds
   * of them (checked on every arrival and abandonment); rejects after `timeoutMs` listing what came.
   */
  waitFor(fact: number | ((requests: ReceivedRequest[]) => boolean), options?: WaitOptions): Promise<ReceivedRequest[]>;
  /** Answers later requests this way. */
  answer(answer: Answer | Answerer): void;
  /** Lets the held requests that match go on; returns how many there were. */
  release(match?: RequestMatch): number;
  /** The most requests to `path` ever in progress at once. */
  maxConcurrency(path: string): number;
  /** TCP connections accepted so far: a request refused before connecting adds none. */
  connections(): number;
  /** Cuts every connection, held ones included, and stops listening. */
  close(): Promise<void>;
}

const DEFAULT_ANSWER: Answer = { status: 200, json: { ok: true } };

function matcher(match: RequestMatch | undefined): (request: ReceivedRequest) => boolean {
  if (match === undefined) return () => true;
  return typeof match === 'string' ? (request) => request.path === match : match;
}

function parseJson(headers: IncomingHttpHeaders, body: string): unknown {
  if (!/\bjson\b/i.test(headers['content-type'] ?? '')) return undefined;
  try {
    return JSON.parse(body) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * Starts a receiver answering `answer` (default: 200 `{"ok":true}`). Started inside a test it
 * closes when that test finishes; started in a hook (`beforeAll`) the caller closes it.
 */
export async function startReceiver(answer: Answer | Answerer = DEFAULT_ANSWER): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  // Emits 'change' on every arrival and abandonment: what waitFor re-checks its fact on.
  const changes = new EventEmitter();
  const held = new Map<ReceivedRequest, () => void>();
  const timers = new Set<NodeJS.Timeout>();
  const inProgress = new Map<string, number>();
  const peaks = new Map<string, number>();
  const startedAt = Date.now();
  let answerer: Answerer = typeof answer === 'function' ? answer : () => answer;
  let connections = 0;
  let closing: Promise<void> | undefined;

  const send = (record: ReceivedRequest, response: ServerResponse, reply: Answer) => {
    if (response.destroyed) return;
    const body = reply.json === undefined ? (reply.body ?? '') : JSON.stringify(reply.json);
    const headers = reply.json === undefined ? reply.headers : { 'content-type': 'application/json', ...reply.headers };
    response.writeHead(reply.status ?? 200, headers);
    if (reply.hold !== 'end') return void response.end(body);
    response.flushHeaders();
    if (body.length > 0) response.write(body);
    held.set(record, () => response.end());
  };

  const respond = (record: ReceivedRequest, response: ServerResponse) => {
    const reply = answerer(record);
    if (reply.destroy) return void response.destroy();
    const go = () => {
      if (!reply.delayMs) return send(record, response, reply);
      const timer = setTimeout(() => {
        timers.delete(timer);
        send(record, response, reply);
      }, reply.delayMs);
      timers.add(timer);
    };
    if (reply.hold === 'answer') held.set(record, go);
    else go();
  };

  const server = createServer((request, response) => {
    const path = request.url ?? '/';
    const current = (inProgress.get(path) ?? 0) + 1;
    inProgress.set(path, current);
    peaks.set(path, Math.max(peaks.get(path) ?? 0, current));
    let record: ReceivedRequest | undefined;
    response.on('close', () => {
      inProgress.set(path, (inProgress.get(path) ?? 1) - 1);
      if (!record) return;
      held.delete(record);
      if (response.writableFinished || closing) return;
      record.abandonedAt = Date.now();
      changes.emit('change');
    });
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      record = { method: request.method ?? '', path, headers: request.headers, body, json: parseJson(request.headers, body), receivedAt: Date.now(), abandonedAt: undefined };
      requests.push(record);
      respond(record, response);
      changes.emit('change');
    });
  });
  server.on('connection', () => (connections += 1));
  // A client that gave up (time-out, abort, killed process) resets its socket: expected here.
  server.on('clientError', (_error, socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const received = (match?: RequestMatch) => requests.filter(matcher(match));
  const timedOut = (fact: number | ((requests: ReceivedRequest[]) => boolean), options: WaitOptions, timeoutMs: number) => {
    const what = typeof fact === 'number' ? `${fact} request(s)` : `a fact (${fact.name || 'a predicate'})`;
    const where = typeof options.match === 'string' ? ` to ${options.match}` : options.match ? ' matching' : '';
    const lines = requests.map((request) => `  +${request.receivedAt - startedAt} ms ${request.method} ${request.path} ${request.body.slice(0, 120)}`);
    return new Error(`waited ${timeoutMs} ms for ${what}${where}; ${received(options.match).length} matched of ${requests.length} that arrived:\n${lines.join('\n')}`);
  };

  const receiver: Receiver = {
    port,
    host: `127.0.0.1:${port}`,
    url: (path = '') => `http://127.0.0.1:${port}${path}`,
    requests,
    received,
    waitFor(fact, options = {}) {
      const { timeoutMs = 10_000 } = options;
      const holds = () => {
        const matching = received(options.match);
        return typeof fact === 'number' ? matching.length >= fact : fact(matching);
      };
      return new Promise((resolve, reject) => {
        const check = () => {
          try {
            if (!holds()) return;
            stop();
            resolve(received(options.match));
          } catch (error) {
            stop();
            reject(error instanceof Error ? error : new Error(String(error)));
          }
        };
        const timer = setTimeout(() => (stop(), reject(timedOut(fact, options, timeoutMs))), timeoutMs);
        const stop = () => {
          clearTimeout(timer);
          changes.off('change', check);
        };
        changes.on('change', check);
        check();
      });
    },
    answer(next) {
      answerer = typeof next === 'function' ? next : () => next;
    },
    release(match) {
      const releasing = [...held].filter(([record]) => matcher(match)(record));
      for (const [record, go] of releasing) {
        held.delete(record);
        go();
      }
      return releasing.length;
    },
    maxConcurrency: (path) => peaks.get(path) ?? 0,
    connections: () => connections,
    close() {
      closing ??= new Promise<void>((resolve) => {
        for (const timer of timers) clearTimeout(timer);
        held.clear();
        server.closeAllConnections();
        server.close(() => resolve());
      });
      return closing;
    },
  };
  try {
    onTestFinished(() => receiver.close());
  } catch {
    // Not inside a test (a beforeAll hook): the caller closes it.
  }
  return receiver;
}
