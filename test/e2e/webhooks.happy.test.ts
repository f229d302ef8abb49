import { verifyWebhook, WebhookVerificationError, type AgentPlatformClient, type CreatedWebhook, type RequestBody } from '@agent-platform/client';
import { startReceiver, type Receiver } from '@agent-platform/kit/testing';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Api, ISO_MS, id, newAccount } from './harness/client.js';
import { ofTenant, verifyDelivery } from './harness/deliveries.js';
import { expectStatus, statusOf } from './harness/results.js';

let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(() => receiver.close());

async function createWebhook(client: AgentPlatformClient, body: RequestBody<'/api/v1/webhooks', 'post'>): Promise<CreatedWebhook> {
  return expectStatus(await client.POST('/api/v1/webhooks', { body }), 201);
}

async function buy(client: AgentPlatformClient, credits: number, headers: Record<string, string> = {}) {
  return expectStatus(await client.POST('/api/v1/billing/purchases', { body: { credits }, headers }), 201);
}

/** Waits for `count` deliveries to the tenant's endpoints (every test shares the receiver). */
function waitForTenant(tenantId: string, count: number) {
  return receiver.waitFor(count, { match: ofTenant(tenantId), timeoutMs: 15_000 });
}

describe('webhook endpoints', () => {
  it('are created with a generated signing secret, read, listed, updated and deleted', async () => {
    const { client } = await newAccount(new Api());
    const created = await createWebhook(client, { url: receiver.url('/hooks'), events: ['billing.purchase.completed'], metadata: { team: 'billing' }, description: 'ledger sync' });
    expect(created).toEqual({
      id: expect.stringMatching(id('wh')),
      url: receiver.url('/hooks'),
      events: ['billing.purchase.completed'],
      status: 'active',
      description: 'ledger sync',
      metadata: { team: 'billing' },
      signing_secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/=]{32}$/),
      created_at: expect.stringMatching(ISO_MS),
      updated_at: expect.stringMatching(ISO_MS),
    });
    const webhook = { params: { path: { webhook_id: created.id } } };

    const read = expectStatus(await client.GET('/api/v1/webhooks/{webhook_id}', webhook));
    expect(read).not.toHaveProperty('signing_secret');
    expect(read).toMatchObject({ id: created.id, url: receiver.url('/hooks'), status: 'active' });

    const listed = await client.GET('/api/v1/webhooks');
    expect(listed.data).toMatchObject({ total: 1, page: 1, per_page: 20, items: [{ id: created.id, events: ['billing.purchase.completed'] }] });

    const updated = await client.PATCH('/api/v1/webhooks/{webhook_id}', { ...webhook, body: { events: ['*'], description: 'everything' } });
    expect(expectStatus(updated)).toMatchObject({ id: created.id, events: ['*'], description: 'everything', metadata: { team: 'billing' } });

    expect(expectStatus(await client.DELETE('/api/v1/webhooks/{webhook_id}', webhook))).toEqual({ success: true, message: expect.any(String) });
    expect(await statusOf(client.GET('/api/v1/webhooks/{webhook_id}', webhook))).toBe(404);
  });
});

describe('event delivery', () => {
  it('delivers a purchase event, signed so Stripe and Standard Webhooks libraries verify it, to subscribed endpoints only', async () => {
    const account = await newAccount(new Api());
    const { client } = account;
    const billing = await createWebhook(client, { url: receiver.url('/hooks'), events: ['billing.purchase.completed'] });
    const everything = await createWebhook(client, { url: receiver.url('/hooks?all'), events: ['*'] });
    const agents = await createWebhook(client, { url: receiver.url('/hooks?agents'), events: ['agent.created'] });

    // Bought inside a caller's trace, which the event carries to its delivery attempts.
    const purchase = await buy(client, 250, { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' });
    const arrived = await waitForTenant(account.tenantId, 2);
    // One fan-out statement makes the event's delivery for every subscribed endpoint. Once those
    // that arrived are recorded delivered, the agents endpoint has none, and nothing is left to send.
    const logOf = async (webhook: CreatedWebhook) => expectStatus(await client.GET('/api/v1/webhooks/{webhook_id}/deliveries', { params: { path: { webhook_id: webhook.id } } }));
    await vi.waitFor(async () => {
      for (const webhook of [billing, everything]) expect((await logOf(webhook)).items).toMatchObject([{ status: 'delivered', attempts: 1 }]);
    });
    expect((await logOf(agents)).total).toBe(0);
    expect(receiver.received(ofTenant(account.tenantId))).toHaveLength(2);

    expect(arrived.map((delivery) => delivery.path).sort()).toEqual(['/hooks', '/hooks?all']);
    // verifyDelivery checks the x-service-signature header with Stripe's verifier and the
    // Standard Webhooks headers with that project's own library, not with the client's.
    const events = arrived.map((delivery) => {
      const secret = delivery.path === '/hooks' ? billing.signing_secret : everything.signing_secret;
      return { delivery, webhookEvent: verifyDelivery(delivery, secret) };
    });
    for (const { delivery, webhookEvent } of events) {
      expect(JSON.parse(delivery.body)).toEqual({
        id: expect.stringMatching(id('evt')),
        type: 'billing.purchase.completed',
        created_at: expect.stringMatching(ISO_MS),
        data: { purchase_id: purchase.id, credits: 250, balance: 1250 },
        tenant_id: account.tenantId,
        api_version: '2026-11-01',
      });
      expect(delivery.headers['x-service-event-id']).toBe(webhookEvent.id);
      expect(delivery.headers['x-service-event-type']).toBe('billing.purchase.completed');
      expect(delivery.headers['x-service-delivery-id']).toMatch(id('dlv'));
      expect(delivery.headers['webhook-id']).toBe(webhookEvent.id);
      // The platform's trace stays inside it: the headers a receiver gets are the documented ones.
      expect(delivery.headers).not.toHaveProperty('traceparent');
    }
    expect(new Set(events.map(({ webhookEvent }) => webhookEvent.id)).size).toBe(1);

    const log = expectStatus(await client.GET('/api/v1/webhooks/{webhook_id}/deliveries', { params: { path: { webhook_id: billing.id } } }));
    expect(log).toMatchObject({ total: 1, next_cursor: null });
    expect(log.items[0]).toEqual({
      id: expect.stringMatching(id('dlv')),
      event_id: events[0]?.webhookEvent.id,
      event_type: 'billing.purchase.completed',
      status: 'delivered',
      response_status: 200,
      response_time_ms: expect.any(Number),
      attempts: 1,
      delivered_at: expect.stringMatching(ISO_MS),
      next_attempt_at: null,
      error: null,
      created_at: expect.stringMatching(ISO_MS),
    });
  });

  it('signs with a supplied secret and, after rotation, with the new one only', async () => {
    const account = await newAccount(new Api());
    const { client } = account;
    const supplied = 'my own secret of 24 chars';
    const webhook = await createWebhook(client, { url: receiver.url('/hooks'), events: ['billing.purchase.completed'], secret: supplied });
    expect(webhook.signing_secret).toBe(supplied);
    await buy(client, 1);
    const [first] = await waitForTenant(account.tenantId, 1);
    expect(verifyWebhook(first!.body, first!.headers, supplied).type).toBe('billing.purchase.completed');

    const rotated = expectStatus(await client.POST('/api/v1/webhooks/{webhook_id}/rotate-secret', { params: { path: { webhook_id: webhook.id } } }));
    expect(rotated.signing_secret).toMatch(/^whsec_/);
    await buy(client, 2);
    const [, second] = await waitForTenant(account.tenantId, 2);
    expect(verifyWebhook(second!.body, second!.headers, rotated.signing_secret).data).toMatchObject({ credits: 2 });
    expect(() => verifyWebhook(second!.body, second!.headers, supplied)).toThrow(WebhookVerificationError);
  });

  it('sends a test event now and logs it', async () => {
    const account = await newAccount(new Api());
    const { client } = account;
    const webhook = await createWebhook(client, { url: receiver.url('/hooks'), events: ['*'] });
    const path = { params: { path: { webhook_id: webhook.id } } };
    const tested = expectStatus(await client.POST('/api/v1/webhooks/{webhook_id}/test', { ...path, body: { event_type: 'agent.created' } }));
    expect(tested).toEqual({
      success: true,
      delivery_id: expect.stringMatching(id('dlv')),
      response_status: 200,
      response_time_ms: expect.any(Number),
    });
    const [delivery] = await waitForTenant(account.tenantId, 1);
    expect(verifyWebhook(delivery!.body, delivery!.headers, webhook.signing_secret).type).toBe('agent.created');
    const log = expectStatus(await client.GET('/api/v1/webhooks/{webhook_id}/deliveries', path));
    expect(log.items.map((item) => item.id)).toEqual([tested.delivery_id]);
  });
});
