import { Webhook, WebhookVerificationError as StandardVerificationError } from 'standardwebhooks';
import type { WebhookEvent } from './webhook-events.js';

/** A delivery that is not authentic (signature, timestamp) or not an event; `cause` holds the verifier's error. */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
}

/** A request's headers: a fetch `Headers`, or a record such as Node's `IncomingHttpHeaders`. */
export type WebhookHeaders = Headers | Readonly<Record<string, string | readonly string[] | undefined>>;

const SIGNATURE_HEADERS = ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const;
const ENVELOPE_STRINGS = ['id', 'type', 'created_at', 'tenant_id', 'api_version'] as const;

/**
 * Checks a delivery's Standard Webhooks signature (`webhook-id`, `webhook-timestamp` within five
 * minutes, `webhook-signature`) against the webhook's `signing_secret`, and returns its event.
 * `payload` must be the raw body exactly as received (a string or the bytes), not re-serialised JSON.
 * Throws {@link WebhookVerificationError} when the signature, the timestamp or the envelope is wrong.
 *
 * Events of types added to the catalogue after this client was built arrive too: keep a `default`
 * in a `switch` on `type`. A delivery sent by `POST /webhooks/{id}/test` carries `data: {test: true}`.
 */
export function verifyWebhook(payload: string | Uint8Array, headers: WebhookHeaders, secret: string): WebhookEvent {
  const body = typeof payload === 'string' ? payload : new TextDecoder().decode(payload);
  // A generated secret (whsec_<base64>) keys with its decoded bytes, a supplied one with its own UTF-8 bytes (decisions §8).
  const verifier = secret.startsWith('whsec_') ? new Webhook(secret) : new Webhook(new TextEncoder().encode(secret), { format: 'raw' });
  try {
    verifier.verify(body, signatureHeaders(headers), { jsonParse: false });
  } catch (error) {
    if (error instanceof StandardVerificationError) throw new WebhookVerificationError(error.message, { cause: error });
    throw error;
  }
  return envelope(body);
}

function signatureHeaders(headers: WebhookHeaders): Record<string, string> {
  const picked: Record<string, string> = {};
  for (const name of SIGNATURE_HEADERS) {
    const value = headerValue(headers, name);
    if (value !== undefined) picked[name] = value;
  }
  return picked;
}

function headerValue(headers: WebhookHeaders, name: string): string | undefined {
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() !== name || value === undefined) continue;
    // Repeated headers: several signatures are space-separated in one webhook-signature.
    return typeof value === 'string' ? value : value.join(' ');
  }
  return undefined;
}

function envelope(body: string): WebhookEvent {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    throw new WebhookVerificationError('The payload is not JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new WebhookVerificationError('The payload is not an event envelope');
  const candidate = value as Record<string, unknown>;
  const data = candidate.data;
  if (!ENVELOPE_STRINGS.every((key) => typeof candidate[key] === 'string') || typeof data !== 'object' || data === null || Array.isArray(data)) {
    throw new WebhookVerificationError('The payload is not an event envelope');
  }
  return value as WebhookEvent;
}
