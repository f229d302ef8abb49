import type { ReceivedRequest } from '@agent-platform/kit/testing';
import Stripe from 'stripe';

const stripe = new Stripe('sk_test_unused');

/**
 * True when the request's `x-service-signature` was made with `secret`, as a customer checks it:
 * with Stripe's own verifier (the header follows Stripe's scheme, decisions §8).
 */
export function signedWith(request: ReceivedRequest, secret: string): boolean {
  const header = request.headers['x-service-signature'];
  if (typeof header !== 'string') return false;
  try {
    stripe.webhooks.constructEvent(request.body, header, secret);
    return true;
  } catch {
    return false;
  }
}
