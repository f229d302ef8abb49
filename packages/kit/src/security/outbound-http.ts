import http from 'node:http';
import https from 'node:https';
import { context } from '@opentelemetry/api';
import { suppressTracing } from '@opentelemetry/core';
import type { OutboundPolicy } from './outbound-policy.js';

/** Why an outbound request produced no response. */
export type OutboundFailureReason =
  | 'blocked' // the SSRF policy refused the address
  | 'timeout'
  | 'aborted' // the caller's signal
  | 'network' // refused, reset, DNS, TLS…
  | 'invalid_url'
  | 'invalid_request'; // a header or method node:http will not send

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

export interface OutboundHttpOptions {
  policy: OutboundPolicy;
  /** Sent unless a request sets its own `user-agent`. */
  userAgent: string;
}

/**
 * HTTP(S) to addresses users configure (webhooks, workflow integrations), behind the SSRF guard of
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
    this.agents = { http: new http.Agent({ keepAlive: true, lookup }), https: new https.Agent({ keepAlive: true, lookup }) };
  }

  /** A response for any status, 3xx included; rejects only with an OutboundRequestError. */
  async request(request: OutboundRequest): Promise<OutboundResponse> {
    const url = parseUrl(request.url);
    const blocked = this.policy.checkHost(url.hostname);
    if (blocked) throw new OutboundRequestError('blocked', blocked.message, { cause: blocked });
    if (request.signal?.aborted) throw new OutboundRequestError('aborted', 'aborted', { cause: request.signal.reason });

    // One controller ends the exchange for either cause; its reason says which it was.
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new OutboundRequestError('timeout', `timed out after ${request.timeoutMs} ms`)), request.timeoutMs);
    const onAbort = () => controller.abort(new OutboundRequestError('aborted', 'aborted', { cause: request.signal?.reason }));
    request.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      return await this.exchange(url, request, controller.signal);
    } finally {
      clearTimeout(timer);
      request.signal?.removeEventListener('abort', onAbort);
    }
  }

  /** Destroys the pooled sockets; requests in flight fail. */
  close(): void {
    this.agents.http.destroy();
    this.agents.https.destroy();
  }

  private exchange(url: URL, request: OutboundRequest, signal: AbortSignal): Promise<OutboundResponse> {
    const started = performance.now();
    const secure = url.protocol === 'https:';
    return new Promise<OutboundResponse>((resolve, reject) => {
      const fail = (error: unknown) => reject(signal.aborted ? (signal.reason as OutboundRequestError) : toOutboundError(error));
      let outgoing: http.ClientRequest;
      try {
        // Out of the HTTP instrumentation's reach: it would add `traceparent` to a request whose
        // headers are a documented contract with a party outside the platform (decisions §8).
        // Callers trace these requests themselves (the delivery attempt's span, the node's span).
        outgoing = context.with(suppressTracing(context.active()), () =>
          (secure ? https : http).request(url, {
            method: request.method,
            agent: secure ? this.agents.https : this.agents.http,
            headers: requestHeaders(this.userAgent, request.headers, request.body),
            signal,
          }),
        );
      } catch (error) {
        // node:http validates the method and header names and values before sending anything.
        reject(new OutboundRequestError('invalid_request', error instanceof Error ? error.message : 'invalid request', { cause: error }));
        return;
      }
      // node:http turns an abort into an error event, but not in every state of a response.
      signal.addEventListener('abort', () => fail(signal.reason), { once: true });
      outgoing.on('error', fail);
      outgoing.on('response', (response) => {
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
      outgoing.end(request.body);
    });
  }
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
