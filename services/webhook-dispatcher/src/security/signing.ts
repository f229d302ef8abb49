import { createHmac, createSecretKey, randomBytes, type KeyObject } from 'node:crypto';

/** Prefix of platform-generated secrets, as Stripe and Standard Webhooks spell theirs. */
export const SECRET_PREFIX = 'whsec_';
// 24 bytes = 192 bits of entropy, 32 base64 characters without padding.
const GENERATED_SECRET_BYTES = 24;
// Visible ASCII: what fits in a config file or header without quoting surprises.
const SUPPLIED_SECRET_PATTERN = /^[\x20-\x7e]{16,128}$/;
const BASE64_PATTERN = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

export function generateSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(GENERATED_SECRET_BYTES).toString('base64')}`;
}

/** decisions §8: a supplied secret is 16–128 printable ASCII characters (space included). */
export function isAcceptableSecret(secret: string): boolean {
  return SUPPLIED_SECRET_PATTERN.test(secret);
}

/**
 * The Standard Webhooks HMAC key: the base64-decoded part after `whsec_`, or — for a supplied
 * secret of any other form — its UTF-8 bytes.
 */
export function standardWebhooksKey(secret: string): Buffer {
  if (secret.startsWith(SECRET_PREFIX)) {
    const encoded = secret.slice(SECRET_PREFIX.length);
    if (encoded.length > 0 && BASE64_PATTERN.test(encoded)) return Buffer.from(encoded, 'base64');
  }
  return Buffer.from(secret, 'utf8');
}

/**
 * An endpoint's secret as HMAC keys, made once per secret: handing createHmac a KeyObject skips
 * the key checks it runs on every Buffer (several times the cost of the HMAC of a small body).
 */
export interface SigningKeys {
  /** The secret's UTF-8 bytes (Stripe's scheme). */
  stripe: KeyObject;
  /** standardWebhooksKey(secret). */
  standard: KeyObject;
}

export function signingKeys(secret: string): SigningKeys {
  return { stripe: createSecretKey(Buffer.from(secret, 'utf8')), standard: createSecretKey(standardWebhooksKey(secret)) };
}

export interface SignatureInput {
  keys: SigningKeys;
  /** The event id; Standard Webhooks' `webhook-id`, constant across retries so receivers can dedupe. */
  messageId: string;
  /** Unix seconds. */
  timestamp: number;
  /** The exact bytes sent. */
  body: string;
}

export interface SignatureHeaders {
  'x-service-signature': string;
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/**
 * The two signature families of decisions §8, over the same bytes:
 * - `x-service-signature: t=<t>,v1=<hex HMAC-SHA256(secret as UTF-8, "<t>.<body>")>` — Stripe's
 *   scheme, so `stripe.webhooks.constructEvent` verifies it;
 * - `webhook-signature: v1,<base64 HMAC-SHA256(key, "<id>.<t>.<body>")>` with the Standard
 *   Webhooks key, so the `standardwebhooks` libraries verify it.
 */
export function signDelivery(input: SignatureInput): SignatureHeaders {
  const t = String(input.timestamp);
  const stripe = createHmac('sha256', input.keys.stripe).update(`${t}.${input.body}`, 'utf8').digest('hex');
  const standard = createHmac('sha256', input.keys.standard).update(`${input.messageId}.${t}.${input.body}`, 'utf8').digest('base64');
  return {
    'x-service-signature': `t=${t},v1=${stripe}`,
    'webhook-id': input.messageId,
    'webhook-timestamp': t,
    'webhook-signature': `v1,${standard}`,
  };
}
