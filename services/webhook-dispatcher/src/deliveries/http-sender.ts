import http from 'node:http';
import https from 'node:https';
import type { OutboundPolicy } from '@agent-platform/kit/security';
import { signDelivery } from '../security/signing.js';
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
  secret: string;
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
    secret: input.secret,
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
 * One POST per attempt over node:http(s): no redirects (a 3xx is a failure), an overall time-out,
 * the SSRF policy applied to the address actually dialled, and a capped, discarded response body.
 * Success is any 2xx.
 */
export class HttpSender {
  private readonly options: HttpSenderOptions;
  // Keep-alive pools: a busy endpoint is not re-handshaken per event. Sockets are only ever
  // opened through the policy's lookup, so a reused socket was checked when it was opened.
  private readonly agents = { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) };

  constructor(options: HttpSenderOptions) {
    this.options = options;
  }

  /** Never rejects: every failure is an attempt result. `signal` aborts it (shutdown). */
  async send(request: AttemptRequest, signal?: AbortSignal): Promise<AttemptResult> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const timeout = AbortSignal.timeout(this.options.timeoutMs);
    const combined = signal ? AbortSignal.any([timeout, signal]) : timeout;
    try {
      const url = new URL(request.url);
      const blocked = this.options.policy.checkHost(url.hostname);
      if (blocked) return failed(0, elapsed(), blocked.message);
      const status = await this.post(url, request, combined);
      if (status >= 200 && status < 300) return { outcome: 'delivered', responseStatus: status, responseTimeMs: elapsed(), error: null };
      const reason = status >= 300 && status < 400 ? `redirect (HTTP ${status}) not followed` : `HTTP ${status}`;
      return failed(status, elapsed(), reason);
    } catch (error) {
      const message = timeout.aborted ? `timed out after ${this.options.timeoutMs} ms` : describeError(error);
      return failed(0, elapsed(), message);
    }
  }

  /** Closes idle keep-alive sockets. */
  close(): void {
    this.agents.http.destroy();
    this.agents.https.destroy();
  }

  private post(url: URL, request: AttemptRequest, signal: AbortSignal): Promise<number> {
    const secure = url.protocol === 'https:';
    const transport = secure ? https : http;
    return new Promise<number>((resolve, reject) => {
      const outgoing = transport.request(url, {
        method: 'POST',
        agent: secure ? this.agents.https : this.agents.http,
        lookup: this.options.policy.lookup,
        signal,
        headers: { ...request.headers, 'content-length': String(Buffer.byteLength(request.body, 'utf8')) },
      });
      outgoing.on('error', reject);
      outgoing.on('response', (response) => {
        const status = response.statusCode ?? 0;
        let received = 0;
        response.on('data', (chunk: Buffer) => {
          received += chunk.length;
          // Enough: the status is known, and the rest would only cost memory and time.
          if (received > MAX_RESPONSE_BYTES) {
            response.destroy();
            resolve(status);
          }
        });
        response.on('end', () => resolve(status));
        response.on('error', reject);
      });
      outgoing.end(request.body, 'utf8');
    });
  }
}

function failed(responseStatus: number, responseTimeMs: number, error: string): AttemptResult {
  return { outcome: 'failed', responseStatus, responseTimeMs, error: error.slice(0, MAX_ERROR_LENGTH) };
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
};

function describeError(error: unknown): string {
  if (!(error instanceof Error)) return 'request failed';
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'EBLOCKEDADDRESS') return error.message;
  if (error.name === 'AbortError') return 'aborted';
  if (code !== undefined && CODE_TEXT[code] !== undefined) return CODE_TEXT[code];
  if (code?.startsWith('ERR_TLS') || code?.includes('CERT')) return `TLS error: ${error.message}`;
  return error.message || 'request failed';
}
