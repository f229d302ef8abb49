import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { WebhookEvent } from './webhook-events.js';
import { verifyWebhook, WebhookVerificationError } from './webhooks.js';

const EVENT = {
  id: 'evt_01',
  type: 'billing.purchase.completed',
  created_at: '2026-01-02T03:04:05.006Z',
  data: { purchase_id: 'pur_01', credits: 250, balance: 1250 },
  tenant_id: 'tnt_01',
  api_version: '2026-11-01',
};

const GENERATED = `whsec_${randomBytes(24).toString('base64')}`;
const SUPPLIED = 'my own secret of 24 chars';

/** Signs as the webhook-dispatcher does: with the bytes after whsec_, or a supplied secret's own bytes. */
function sign(body: string, secret: string, at = new Date()): Record<string, string> {
  const signer = secret.startsWith('whsec_') ? new Webhook(secret) : new Webhook(new TextEncoder().encode(secret), { format: 'raw' });
  return { 'webhook-id': EVENT.id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': signer.sign(EVENT.id, at, body) };
}

describe('verifyWebhook', () => {
  const body = JSON.stringify(EVENT);

  it.each([
    ['a generated whsec_ secret', GENERATED],
    ['a supplied secret', SUPPLIED],
  ])('returns the event signed with %s, from a headers record, a Headers or bytes', (_label, secret) => {
    const headers = sign(body, secret);
    expect(verifyWebhook(body, headers, secret)).toEqual(EVENT);
    expect(verifyWebhook(body, new Headers(headers), secret)).toEqual(EVENT);
    const shouted = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toUpperCase(), [value]]));
    expect(verifyWebhook(Buffer.from(body), shouted, secret)).toEqual(EVENT);
  });

  it('narrows data by event type', () => {
    const event = verifyWebhook(body, sign(body, GENERATED), GENERATED);
    expectTypeOf(event).toEqualTypeOf<WebhookEvent>();
    if (event.type !== 'billing.purchase.completed') throw new Error(`unexpected ${event.type}`);
    expectTypeOf(event.data).toEqualTypeOf<{ purchase_id: string; credits: number; balance: number }>();
    expect(event.data.credits).toBe(250);
  });

  it.each([
    ['a tampered body', body.replace('250', '2500'), sign(body, GENERATED), GENERATED],
    ['another secret', body, sign(body, GENERATED), `whsec_${randomBytes(24).toString('base64')}`],
    ['a supplied secret checked as if it were another', body, sign(body, SUPPLIED), `${SUPPLIED}!`],
    ['a timestamp ten minutes old', body, sign(body, GENERATED, new Date(Date.now() - 600_000)), GENERATED],
    ['no signature header', body, { ...sign(body, GENERATED), 'webhook-signature': undefined }, GENERATED],
    ['a signed payload that is not an event', '{"hello":"world"}', sign('{"hello":"world"}', GENERATED), GENERATED],
    ['a signed payload that is not JSON', 'hello', sign('hello', GENERATED), GENERATED],
  ])('throws WebhookVerificationError for %s', (_label, payload, headers, secret) => {
    expect(() => verifyWebhook(payload, headers, secret)).toThrow(WebhookVerificationError);
  });
});
