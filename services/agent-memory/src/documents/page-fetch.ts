import { OutboundRequestError, type OutboundHttp } from '@agent-platform/kit/security';

/** A page as fetched: where the redirects ended, its bytes and what its server said it is. */
export interface FetchedPage {
  url: string;
  bytes: Buffer;
  contentType: string;
}

export interface PageFetchLimits {
  timeoutMs: number;
  maxBytes: number;
  signal?: AbortSignal;
}

/**
 * Why a fetch failed. `retryable` failures (time-outs, refused connections, 5xx, 429) may pass;
 * the others (a blocked address, 404, a page over the limit) will fail the same way next time.
 */
export class PageFetchError extends Error {
  override readonly name = 'PageFetchError';
  readonly retryable: boolean;

  constructor(message: string, retryable: boolean, options?: ErrorOptions) {
    super(message, options);
    this.retryable = retryable;
  }
}

const MAX_REDIRECTS = 5;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const RETRYABLE_STATUSES = new Set([408, 425, 429]);
const RETRYABLE_REASONS = new Set(['timeout', 'network']);
const ACCEPT = 'text/html,application/xhtml+xml,text/markdown,text/plain,text/csv,application/json,application/pdf;q=0.9,*/*;q=0.5';

/**
 * GETs a page through the SSRF guard. Redirects are followed here, at most five, each hop dialled
 * through the guard like the first (a public page that redirects to a private address is refused
 * at that hop), and only to http(s). The body is capped at `maxBytes`.
 */
export async function fetchPage(http: OutboundHttp, url: string, limits: PageFetchLimits): Promise<FetchedPage> {
  let current = url;
  for (let hop = 0; hop <= MAX_REDIRECTS; hop += 1) {
    let answer;
    try {
      answer = await http.request({
        url: current,
        method: 'GET',
        headers: { accept: ACCEPT },
        timeoutMs: limits.timeoutMs,
        // One byte past the cap tells a page at the limit from one over it.
        maxResponseBytes: limits.maxBytes + 1,
        ...(limits.signal ? { signal: limits.signal } : {}),
      });
    } catch (error) {
      if (error instanceof OutboundRequestError) throw new PageFetchError(`${current}: ${error.message}`, RETRYABLE_REASONS.has(error.reason), { cause: error });
      throw error;
    }
    if (REDIRECTS.has(answer.status)) {
      const location = answer.headers['location'];
      if (!location) throw new PageFetchError(`${current} answered ${answer.status} without a Location`, false);
      const next = new URL(location, current);
      if (next.protocol !== 'http:' && next.protocol !== 'https:') throw new PageFetchError(`${current} redirects to a ${next.protocol} URL`, false);
      current = next.href;
      continue;
    }
    if (answer.status < 200 || answer.status > 299) {
      throw new PageFetchError(`${current} answered HTTP ${answer.status}`, answer.status >= 500 || RETRYABLE_STATUSES.has(answer.status));
    }
    if (answer.truncated || answer.body.length > limits.maxBytes) throw new PageFetchError(`${current} is larger than ${limits.maxBytes} bytes`, false);
    return { url: current, bytes: answer.body, contentType: answer.headers['content-type'] ?? '' };
  }
  throw new PageFetchError(`${url} redirects more than ${MAX_REDIRECTS} times`, false);
}
