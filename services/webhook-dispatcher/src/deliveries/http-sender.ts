import { OutboundHttp, OutboundRequestError, type OutboundPolicy } from '@agent-platform/kit/security';
import { signDelivery, type SigningKeys } from '../security/signing.js';
import type { AttemptOutcome } from './deliveries.entity.js';

/** Read at most this much of a response (then drop the connection); nobody looks at it. */
export const MAX_RESPONSE_BYTES = 64 * 1_024;
const MAX_ERROR_LENGTH = 500;
export const USER_AGENT = 'AgentPlatform-Webhooks/1.0';

export interface AttemptRequest {
  url: string;
  /** The exact bytes to send, already signed. */
  body: string;
  headers: Record<string, string>;
}

export interface AttemptResult {
  outcome: AttemptOutcome;
  /** 0 when no HTTP response arrived. */
  responseStatus: number;
  responseTimeMs: number;
  error: string | null;
}

export interface AttemptInput {
  url: string;
  keys: SigningKeys;
  eventId: string;
  eventType: string;
  deliveryId: string;
  /** The envelope's JSON, sent and signed byte for byte. */
  body: string;
  now: Date;
}

/**
 * The request of one attempt: the body, both signature families of decisions §8 (signed afresh
 * per attempt, so a retry carries a current timestamp), and the event's identifiers.
 */
export function buildAttemptRequest(input: AttemptInput): AttemptRequest {
  const signatures = signDelivery({
    keys: input.keys,
    messageId: input.eventId,
    timestamp: Math.floor(input.now.getTime() / 1_000),
    body: input.body,
  });
  return {
    url: input.url,
    body: input.body,
    headers: {
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      'x-service-event-id': input.eventId,
      'x-service-event-type': input.eventType,
      'x-service-delivery-id': input.deliveryId,
      ...signatures,
    },
  };
}

export interface HttpSenderOptions {
  policy: OutboundPolicy;
  /** The whole attempt, from connecting to the last byte read. */
  timeoutMs: number;
}

/**
 * One POST per attempt through the kit's guarded client: no redirects (a 3xx is a failure), an
 * overall time-out, the SSRF policy applied to the address actually dialled, and a capped,
 * discarded response body. Success is any 2xx.
 */
export class HttpSender {
  private readonly http: OutboundHttp;
  private readonly timeoutMs: number;

  constructor(options: HttpSenderOptions) {
    this.http = new OutboundHttp({ policy: options.policy, userAgent: USER_AGENT });
    this.timeoutMs = options.timeoutMs;
  }

  /** Never rejects: every failure is an attempt result. `signal` aborts it (shutdown). */
  async send(request: AttemptRequest, signal?: AbortSignal): Promise<AttemptResult> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    try {
      const { status } = await this.http.request({
        url: request.url,
        method: 'POST',
        headers: request.headers,
        body: request.body,
        timeoutMs: this.timeoutMs,
        maxResponseBytes: MAX_RESPONSE_BYTES,
        signal,
      });
      if (status >= 200 && status < 300) return { outcome: 'delivered', responseStatus: status, responseTimeMs: elapsed(), error: null };
      const reason = status >= 300 && status < 400 ? `redirect (HTTP ${status}) not followed` : `HTTP ${status}`;
      return failed(status, elapsed(), reason);
    } catch (error) {
      return failed(0, elapsed(), error instanceof OutboundRequestError ? error.message : 'request failed');
    }
  }

  /** Closes idle keep-alive sockets. */
  close(): void {
    this.http.close();
  }
}

function failed(responseStatus: number, responseTimeMs: number, error: string): AttemptResult {
  return { outcome: 'failed', responseStatus, responseTimeMs, error: error.slice(0, MAX_ERROR_LENGTH) };
}
