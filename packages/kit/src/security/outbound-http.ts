import http from 'node:http';
import https from 'node:https';
import { untracedAgent } from '../telemetry/untraced-agent.js';
import { timedSignal } from '../timeout.js';
import type { OutboundPolicy } from './outbound-policy.js';

/** Why an outbound request produced no response. */
export type OutboundFailureReason =
  | 'blocked' // the SSRF policy refused the address
  | 'timeout'
  | 'aborted' // the caller's signal
  | 'network' // refused, reset, DNS, TLS…
  | 'invalid_url'
  | 'invalid_request' // a header or method node:http will not send
  | 'too_large'; // a streamed body went past its cap

/** An outbound request that produced no response; `message` is fit to show to whoever configured the URL. */
export class OutboundRequestError extends Error {
  override readonly name = 'OutboundRequestError';
  readonly reason: OutboundFailureReason;

  constructor(reason: OutboundFailureReason, message: string, options?: ErrorOptions) {
    super(message, options);
    this.reason = reason;
  }
}

export interface OutboundRequest {
  url: string;
  method: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** The whole request, from resolving the host to the last byte read. */
  timeoutMs: number;
  /** Bytes of the response body kept; beyond them the connection is dropped and `truncated` set. */
  maxResponseBytes: number;
  signal?: AbortSignal;
}

export interface OutboundResponse {
  status: number;
  /** Lower-case names; repeated headers joined with `, `. */
  headers: Record<string, string>;
  body: Buffer;
  truncated: boolean;
  timeMs: number;
}

/** A response whose body is read as it arrives (`stream`). */
export interface OutboundStream {
  status: number;
  /** Lower-case names; repeated headers joined with `, `. */
  headers: Record<string, string>;
  body: ReadableStream<Uint8Array>;
}

export interface OutboundHttpOptions {
  policy: OutboundPolicy;
  /** Sent unless a request sets its own `user-agent`. */
  userAgent: string;
}

/**
 * HTTP(S) to addresses users configure (webhooks, workflow integrations, tools), behind the SSRF guard of
 * decisions §8: every socket is opened through the policy's `lookup`, so the address dialled is the
 * address checked (DNS rebinding), and IP-literal hosts, which node:net never looks up, are checked
 * with `checkHost` first. Redirects are never followed: a 3xx is returned like any response.
 */
export class OutboundHttp {
  private readonly policy: OutboundPolicy;
  private readonly userAgent: string;
  // Keep-alive pools, so a busy endpoint is not re-handshaken per request. The lookup is an agent
  // option, which node:http lets no request override: no socket of these pools skips the policy.
  private readonly agents: { http: http.Agent; https: https.Agent };

  constructor(options: OutboundHttpOptions) {
    this.policy = options.policy;
    this.userAgent = options.userAgent;
    const lookup = options.policy.lookup;
    // Untraced: the HTTP instrumentation would add `traceparent` to requests whose headers are a
    // documented contract with a party outside the platform (decisions §8), and measure what the
    // callers trace and measure themselves (the delivery attempt's span, the node's span).
    this.agents = { http: untracedAgent(new http.Agent({ keepAlive: true, lookup })), https: untracedAgent(new https.Agent({ keepAlive: true, lookup })) };
  }

  /** A response for any status, 3xx included; rejects only with an OutboundRequestError. */
  async request(request: OutboundRequest): Promise<OutboundResponse> {
    const exchange = this.begin(request);
    try {
      return await this.buffer(await this.open(exchange, request), request, exchange);
    } finally {
      exchange.end();
    }
  }

  /**
   * The same exchange, answered when the head arrives, for callers that read the body as it comes
   * (an MCP server's event stream). The time-out still covers the whole exchange; a body beyond
   * `maxResponseBytes` errors instead of being cut, as a cut stream cannot be parsed. Cancel the
   * body to end the exchange early.
   */
  async stream(request: OutboundRequest): Promise<OutboundStream> {
    const exchange = this.begin(request);
    let response: http.IncomingMessage;
    try {
      response = await this.open(exchange, request);
    } catch (error) {
      exchange.end();
      throw error;
    }
    return { status: response.statusCode ?? 0, headers: flattenHeaders(response.headers), body: bodyStream(response, request.maxResponseBytes, exchange) };
  }

  /** Destroys the pooled sockets; requests in flight fail. */
  close(): void {
    this.agents.http.destroy();
    this.agents.https.destroy();
  }

  /** Checks what can be checked before connecting, and starts the clock of the whole exchange. */
  private begin(request: OutboundRequest): Exchange {
    const url = parseUrl(request.url);
    const blocked = this.policy.checkHost(url.hostname);
    if (blocked) throw new OutboundRequestError('blocked', blocked.message, { cause: blocked });
    if (request.signal?.aborted) throw new OutboundRequestError('aborted', 'aborted', { cause: request.signal.reason });

    // One signal ends the exchange for either cause; its reason says which it was.
    const bound = timedSignal(request.timeoutMs, request.signal, {
      timeout: () => new OutboundRequestError('timeout', `timed out after ${request.timeoutMs} ms`),
      parent: (reason) => new OutboundRequestError('aborted', 'aborted', { cause: reason }),
    });
    return { url, signal: bound.signal, started: performance.now(), end: () => bound.dispose() };
  }

  /** Sends the request; resolves with the response head. */
  private open(exchange: Exchange, request: OutboundRequest): Promise<http.IncomingMessage> {
    const { url, signal } = exchange;
    const secure = url.protocol === 'https:';
    return new Promise<http.IncomingMessage>((resolve, reject) => {
      const fail = (error: unknown) => reject(signal.aborted ? (signal.reason as OutboundRequestError) : toOutboundError(error));
      let outgoing: http.ClientRequest;
      try {
        outgoing = (secure ? https : http).request(url, {
          method: request.method,
          agent: secure ? this.agents.https : this.agents.http,
          headers: requestHeaders(this.userAgent, request.headers, request.body),
          signal,
        });
      } catch (error) {
        // node:http validates the method and header names and values before sending anything.
        reject(new OutboundRequestError('invalid_request', error instanceof Error ? error.message : 'invalid request', { cause: error }));
        return;
      }
      // node:http turns an abort into an error event, but not in every state of a response.
      signal.addEventListener('abort', () => fail(signal.reason), { once: true });
      outgoing.on('error', fail);
      outgoing.on('response', resolve);
      outgoing.end(request.body);
    });
  }

  /** Reads the body, keeping at most `maxResponseBytes` of it. */
  private buffer(response: http.IncomingMessage, request: OutboundRequest, { signal, started }: Exchange): Promise<OutboundResponse> {
    return new Promise<OutboundResponse>((resolve, reject) => {
      const fail = (error: unknown) => reject(signal.aborted ? (signal.reason as OutboundRequestError) : toOutboundError(error));
      if (signal.aborted) fail(signal.reason);
      signal.addEventListener('abort', () => fail(signal.reason), { once: true });
      const chunks: Buffer[] = [];
      let size = 0;
      const finish = (truncated: boolean) =>
        resolve({
          status: response.statusCode ?? 0,
          headers: flattenHeaders(response.headers),
          body: Buffer.concat(chunks, size),
          truncated,
          timeMs: Math.round(performance.now() - started),
        });
      response.on('data', (chunk: Buffer) => {
        const room = request.maxResponseBytes - size;
        if (chunk.length <= room) {
          chunks.push(chunk);
          size += chunk.length;
          return;
        }
        chunks.push(chunk.subarray(0, room));
        size += room;
        // Enough: the rest would only cost memory and time; the socket is not reusable mid-body.
        response.destroy();
        finish(true);
      });
      response.on('end', () => finish(false));
      response.on('error', fail);
    });
  }
}

/** One request's URL, its clock and the signal that ends it; `end` stops the clock. */
interface Exchange {
  url: URL;
  signal: AbortSignal;
  started: number;
  end(): void;
}

/** A response body as a web stream, which errors with an OutboundRequestError when the exchange fails. */
function bodyStream(response: http.IncomingMessage, maxBytes: number, exchange: Exchange): ReadableStream<Uint8Array> {
  let settled = false;
  const settle = () => {
    settled = true;
    exchange.end();
  };
  return new ReadableStream<Uint8Array>({
    start(controller) {
      const fail = (error: unknown) => {
        if (settled) return;
        settle();
        response.destroy();
        controller.error(exchange.signal.aborted ? (exchange.signal.reason as OutboundRequestError) : toOutboundError(error));
      };
      if (exchange.signal.aborted) fail(exchange.signal.reason);
      exchange.signal.addEventListener('abort', () => fail(exchange.signal.reason), { once: true });
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxBytes) fail(new OutboundRequestError('too_large', `the response exceeded ${maxBytes} bytes`));
        else if (!settled) controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.length));
      });
      response.on('end', () => {
        if (settled) return;
        settle();
        controller.close();
      });
      response.on('error', fail);
      // A connection that closes mid-body does not always say so with an error.
      response.on('close', () => {
        if (!response.complete) fail(Object.assign(new Error('connection closed before the response ended'), { code: 'ECONNRESET' }));
      });
    },
    cancel() {
      if (settled) return;
      settle();
      response.destroy();
    },
  });
}

function parseUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch (error) {
    throw new OutboundRequestError('invalid_url', 'invalid URL: not an absolute URL', { cause: error });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new OutboundRequestError('invalid_url', `invalid URL: the scheme ${url.protocol.slice(0, -1)} is not http or https`);
  }
  return url;
}

/** Lower-cased names (so a caller's `User-Agent` replaces ours); the length is always the body's. */
function requestHeaders(userAgent: string, headers: Record<string, string> | undefined, body: string | Buffer | undefined): Record<string, string> {
  const result: Record<string, string> = { 'user-agent': userAgent };
  for (const [name, value] of Object.entries(headers ?? {})) {
    const key = name.toLowerCase();
    if (key !== 'content-length' && key !== 'transfer-encoding') result[key] = value;
  }
  if (body !== undefined) result['content-length'] = String(Buffer.byteLength(body));
  return result;
}

function flattenHeaders(headers: http.IncomingHttpHeaders): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) result[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return result;
}

const CODE_TEXT: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset by the receiver',
  ENOTFOUND: 'the host name does not resolve',
  EAI_AGAIN: 'the host name could not be resolved (temporary DNS failure)',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'connection timed out',
  EPIPE: 'connection closed by the receiver',
  HPE_INVALID_CONSTANT: 'the receiver did not answer with HTTP',
};

function toOutboundError(error: unknown): OutboundRequestError {
  if (error instanceof OutboundRequestError) return error;
  if (!(error instanceof Error)) return new OutboundRequestError('network', 'request failed', { cause: error });
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'EBLOCKEDADDRESS') return new OutboundRequestError('blocked', error.message, { cause: error });
  const text = code === undefined ? undefined : CODE_TEXT[code];
  if (text !== undefined) return new OutboundRequestError('network', text, { cause: error });
  if (code?.startsWith('ERR_TLS') || code?.includes('CERT')) return new OutboundRequestError('network', `TLS error: ${error.message}`, { cause: error });
  return new OutboundRequestError('network', error.message || 'request failed', { cause: error });
}
