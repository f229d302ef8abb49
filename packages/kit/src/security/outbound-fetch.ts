import type { OutboundHttp } from './outbound-http.js';

/** What bounds each request of an `outboundFetch`. */
export interface OutboundFetchLimits {
  /** The whole exchange, from resolving the host to the last byte of the body, ms. */
  timeoutMs: number;
  /** Bytes of one response body; beyond them reading it fails. */
  maxResponseBytes: number;
}

/** The shape of `fetch` that SDKs taking one (the MCP client) call. */
export type OutboundFetch = (input: string | URL, init?: RequestInit) => Promise<Response>;

// Statuses whose responses have no body; `new Response` refuses one for them.
const NULL_BODY_STATUSES = new Set([204, 205, 304]);

/**
 * A `fetch` over OutboundHttp, for SDKs that send their own requests: every connection goes
 * through the SSRF guard, each exchange is timed out and each body capped, and redirects are
 * never followed (a 3xx comes back as it was answered, for the SDK to decide on). The body is
 * streamed, so an event stream is read as it arrives. Rejects with an OutboundRequestError,
 * whose message is fit for whoever configured the URL.
 */
export function outboundFetch(http: OutboundHttp, limits: OutboundFetchLimits): OutboundFetch {
  return async (input, init = {}) => {
    const method = (init.method ?? 'GET').toUpperCase();
    const answer = await http.stream({
      url: input instanceof URL ? input.href : input,
      method,
      headers: Object.fromEntries(new Headers(init.headers).entries()),
      ...bodyOf(init.body),
      timeoutMs: limits.timeoutMs,
      maxResponseBytes: limits.maxResponseBytes,
      ...(init.signal ? { signal: init.signal } : {}),
    });
    if (method === 'HEAD' || NULL_BODY_STATUSES.has(answer.status)) {
      await answer.body.cancel();
      return new Response(null, { status: answer.status, headers: answer.headers });
    }
    return new Response(answer.body, { status: answer.status, headers: answer.headers });
  };
}

/** Text and bytes, which is what JSON-speaking SDKs send; anything else is a mistake of the caller. */
function bodyOf(body: RequestInit['body']): { body?: string | Buffer } {
  if (body === undefined || body === null) return {};
  if (typeof body === 'string') return { body };
  if (body instanceof ArrayBuffer) return { body: Buffer.from(body) };
  if (ArrayBuffer.isView(body)) return { body: Buffer.from(body.buffer, body.byteOffset, body.byteLength) };
  throw new TypeError('outboundFetch sends string and byte bodies only');
}
