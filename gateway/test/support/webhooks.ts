import { createHmac, timingSafeEqual } from 'node:crypto';
import type { ReceivedRequest } from '@agent-platform/kit/testing';

/** The event envelope of decisions §8, as a receiver reads it. */
export interface DeliveredEvent {
  id: string;
  type: string;
  created_at: string;
  tenant_id: string;
  api_version: string;
  data: Record<string, unknown>;
}

/**
 * True when the request's `x-service-signature` (`t=<unix seconds>,v1=<hex HMAC-SHA256>` over
 * `<t>.<raw body>`, keyed with the secret's UTF-8 bytes, as Stripe signs) was made with `secret`.
 */
export function signedWith(request: ReceivedRequest, secret: string): boolean {
  const header = request.headers['x-service-signature'];
  const match = typeof header === 'string' ? /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header) : null;
  if (!match) return false;
  const expected = createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${match[1]}.${request.body}`, 'utf8').digest();
  return timingSafeEqual(expected, Buffer.from(match[2]!, 'hex'));
}
