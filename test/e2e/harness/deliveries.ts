import type { ReceivedRequest } from '@agent-platform/kit/testing';
import { Webhook } from 'standardwebhooks';
import Stripe from 'stripe';

/**
 * Deliveries for one tenant only, as a receiver's `match`: the suites share a receiver between
 * tests, and each test's account is a tenant of its own.
 */
export function ofTenant(tenantId: string): (request: ReceivedRequest) => boolean {
  return (request) => request.body.includes(`"tenant_id":"${tenantId}"`);
}

const stripe = new Stripe('sk_test_signature_checks_only');

/** Verifies a delivery as customers do, with both families of libraries; returns the event. */
export function verifyDelivery(delivery: ReceivedRequest, secret: string): { id: string; type: string; data: Record<string, unknown>; tenant_id: string } {
  const header = delivery.headers['x-service-signature'];
  if (typeof header !== 'string') throw new Error('no x-service-signature header');
  // Stripe's verifier checks the `t=…,v1=…` scheme over "<t>.<raw body>" with the secret's bytes.
  const viaStripe = stripe.webhooks.constructEvent(delivery.body, header, secret) as unknown as { id: string };
  // Standard Webhooks keys with the base64 after `whsec_`, or with the raw bytes of another secret.
  const standard = secret.startsWith('whsec_') ? new Webhook(secret) : new Webhook(new TextEncoder().encode(secret), { format: 'raw' });
  const viaStandard = standard.verify(delivery.body, {
    'webhook-id': String(delivery.headers['webhook-id']),
    'webhook-timestamp': String(delivery.headers['webhook-timestamp']),
    'webhook-signature': String(delivery.headers['webhook-signature']),
  }) as { id: string };
  if (viaStripe.id !== viaStandard.id) throw new Error('the two verifiers disagree');
  return JSON.parse(delivery.body) as { id: string; type: string; data: Record<string, unknown>; tenant_id: string };
}
