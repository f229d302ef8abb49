import { createHmac } from 'node:crypto';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import { generateSecret, isAcceptableSecret, signDelivery, signingKeys, standardWebhooksKey } from './signing.js';

const stripe = new Stripe('sk_test_unused');
const body = JSON.stringify({ id: 'evt_01JD0000000000000000000000', type: 'agent.created', created_at: '2026-11-01T00:00:00.000Z', data: { é: '☃' } });
const now = () => Math.floor(Date.now() / 1_000);

function sign(secret: string, payload = body, timestamp = now()) {
  return signDelivery({ keys: signingKeys(secret), messageId: 'evt_01JD0000000000000000000000', timestamp, body: payload });
}

describe('generateSecret', () => {
  it('is whsec_ and the base64 of 24 random bytes', () => {
    const secret = generateSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(24);
    expect(generateSecret()).not.toBe(secret);
    expect(isAcceptableSecret(secret)).toBe(true);
  });
});

describe('isAcceptableSecret', () => {
  it('takes 16 to 128 printable ASCII characters, space included', () => {
    expect(isAcceptableSecret('a'.repeat(16))).toBe(true);
    expect(isAcceptableSecret('~'.repeat(128))).toBe(true);
    expect(isAcceptableSecret('a'.repeat(15))).toBe(false);
    expect(isAcceptableSecret('a'.repeat(129))).toBe(false);
    expect(isAcceptableSecret('with a space 1234')).toBe(true);
    expect(isAcceptableSecret('tab\tinside-123456')).toBe(false);
    expect(isAcceptableSecret('ünïcödé-secret-123')).toBe(false);
  });
});

describe('x-service-signature (Stripe scheme)', () => {
  it.each([['generated', generateSecret()], ['supplied', 'my-own-secret-of-sorts!']])('verifies with stripe.webhooks.constructEvent (%s secret)', (_kind, secret) => {
    const headers = sign(secret);
    const event = stripe.webhooks.constructEvent(body, headers['x-service-signature'], secret);
    expect(event).toMatchObject({ id: 'evt_01JD0000000000000000000000', type: 'agent.created' });
  });

  it('is t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>', () => {
    const headers = sign('whsec_abc', body, 1_700_000_000);
    const expected = createHmac('sha256', 'whsec_abc').update(`1700000000.${body}`).digest('hex');
    expect(headers['x-service-signature']).toBe(`t=1700000000,v1=${expected}`);
  });

  it('fails for another body, another secret or a stale timestamp', () => {
    const secret = generateSecret();
    const headers = sign(secret);
    expect(() => stripe.webhooks.constructEvent(`${body} `, headers['x-service-signature'], secret)).toThrow(/signature/i);
    expect(() => stripe.webhooks.constructEvent(body, headers['x-service-signature'], generateSecret())).toThrow(/signature/i);
    const stale = sign(secret, body, now() - 3_600);
    expect(() => stripe.webhooks.constructEvent(body, stale['x-service-signature'], secret)).toThrow(/tolerance/i);
  });
});

describe('webhook-signature (Standard Webhooks)', () => {
  it('verifies with the standardwebhooks package for a whsec_ secret', () => {
    const secret = generateSecret();
    const headers = sign(secret);
    expect(new Webhook(secret).verify(body, headers)).toMatchObject({ type: 'agent.created' });
    expect(headers['webhook-id']).toBe('evt_01JD0000000000000000000000');
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
  });

  it('is keyed with the raw UTF-8 bytes of a supplied secret of another form', () => {
    const secret = 'plain-supplied-secret-42';
    const headers = sign(secret);
    expect(standardWebhooksKey(secret).toString('utf8')).toBe(secret);
    expect(new Webhook(new TextEncoder().encode(secret), { format: 'raw' }).verify(body, headers)).toMatchObject({ type: 'agent.created' });
  });

  it('treats a whsec_ secret whose tail is not base64 as a plain secret', () => {
    expect(standardWebhooksKey('whsec_not*base64!!').toString('utf8')).toBe('whsec_not*base64!!');
  });

  it('fails for a tampered body, another secret or a replayed old timestamp', () => {
    const secret = generateSecret();
    const headers = sign(secret);
    expect(() => new Webhook(secret).verify(body.replace('☃', '☀'), headers)).toThrow(WebhookVerificationError);
    expect(() => new Webhook(generateSecret()).verify(body, headers)).toThrow(WebhookVerificationError);
    expect(() => new Webhook(secret).verify(body, sign(secret, body, now() - 3_600))).toThrow(WebhookVerificationError);
  });
});
