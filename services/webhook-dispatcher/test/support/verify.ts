import { Webhook } from 'standardwebhooks';
import Stripe from 'stripe';
import { expect } from 'vitest';
import type { ReceivedRequest } from '@agent-platform/kit/testing';

const stripe = new Stripe('sk_test_unused');

export interface DeliveredEvent {
  id: string;
  type: string;
  created_at: string;
  tenant_id: string;
  api_version: string;
  data: Record<string, unknown>;
}

function header(request: ReceivedRequest, name: string): string {
  const value = request.headers[name];
  if (typeof value !== 'string') throw new Error(`missing header ${name}`);
  return value;
}

/**
 * Verifies a received delivery the way customers do: with Stripe's `constructEvent` on
 * `x-service-signature`, and with the `standardwebhooks` package on the `webhook-*` headers
 * (keyed per decisions §8). Also checks the identifying headers agree with the body.
 */
export function verifyDelivery(request: ReceivedRequest, secret: string): DeliveredEvent {
  expect(request.method).toBe('POST');
  expect(request.headers['content-type']).toBe('application/json');
  expect(request.headers['user-agent']).toMatch(/^AgentPlatform-Webhooks\//);
  const event = stripe.webhooks.constructEvent(request.body, header(request, 'x-service-signature'), secret) as unknown as DeliveredEvent;
  const standard = secret.startsWith('whsec_') ? new Webhook(secret) : new Webhook(new TextEncoder().encode(secret), { format: 'raw' });
  const verified = standard.verify(request.body, {
    'webhook-id': header(request, 'webhook-id'),
    'webhook-timestamp': header(request, 'webhook-timestamp'),
    'webhook-signature': header(request, 'webhook-signature'),
  });
  expect(verified).toEqual(JSON.parse(request.body));
  expect(header(request, 'webhook-id')).toBe(event.id);
  expect(header(request, 'x-service-event-id')).toBe(event.id);
  expect(header(request, 'x-service-event-type')).toBe(event.type);
  expect(header(request, 'x-service-delivery-id')).toMatch(/^dlv_[0-9A-HJKMNP-TV-Z]{26}$/);
  return event;
}

/** True when both libraries accept the request's signatures with `secret`. */
export function verifiesWith(request: ReceivedRequest, secret: string): boolean {
  try {
    stripe.webhooks.constructEvent(request.body, header(request, 'x-service-signature'), secret);
    const standard = secret.startsWith('whsec_') ? new Webhook(secret) : new Webhook(new TextEncoder().encode(secret), { format: 'raw' });
    standard.verify(request.body, {
      'webhook-id': header(request, 'webhook-id'),
      'webhook-timestamp': header(request, 'webhook-timestamp'),
      'webhook-signature': header(request, 'webhook-signature'),
    });
    return true;
  } catch {
    return false;
  }
}
