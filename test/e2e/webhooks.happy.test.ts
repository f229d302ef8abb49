import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Api, ISO_MS, id, newAccount, type Account } from './harness/client.js';
import { Receiver, verifyDelivery } from './harness/receiver.js';

let receiver: Receiver;
beforeAll(async () => {
  receiver = await Receiver.start();
});
afterAll(() => receiver.close());

interface WebhookBody {
  id: string;
  url: string;
  events: string[];
  status: string;
  signing_secret: string;
}

async function createWebhook(api: Api, account: Account, json: Record<string, unknown>): Promise<WebhookBody> {
  const created = await api.post<WebhookBody>('/api/v1/webhooks', { token: account.accessToken, json });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body;
}

/** Deliveries for one tenant only: every test shares the receiver. */
function deliveriesOf(tenantId: string) {
  return receiver.received.filter((delivery) => delivery.body.includes(`"tenant_id":"${tenantId}"`));
}

async function waitForTenant(tenantId: string, count: number, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  while (deliveriesOf(tenantId).length < count) {
    if (Date.now() > deadline) throw new Error(`expected ${count} deliveries for ${tenantId}, got ${deliveriesOf(tenantId).length}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return deliveriesOf(tenantId);
}

describe('webhook endpoints', () => {
  it('are created with a generated signing secret, read, listed, updated and deleted', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const created = await api.post('/api/v1/webhooks', {
      token: account.accessToken,
      json: { url: receiver.url, events: ['billing.purchase.completed'], metadata: { team: 'billing' }, description: 'ledger sync' },
    });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(id('wh')),
      url: receiver.url,
      events: ['billing.purchase.completed'],
      status: 'active',
      description: 'ledger sync',
      metadata: { team: 'billing' },
      signing_secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/=]{32}$/),
      created_at: expect.stringMatching(ISO_MS),
      updated_at: expect.stringMatching(ISO_MS),
    });
    const webhookId = created.body.id as string;

    const read = await api.get(`/api/v1/webhooks/${webhookId}`, { token: account.accessToken });
    expect(read.status).toBe(200);
    expect(read.body).not.toHaveProperty('signing_secret');
    expect(read.body).toMatchObject({ id: webhookId, url: receiver.url, status: 'active' });

    const listed = await api.get('/api/v1/webhooks', { token: account.accessToken });
    expect(listed.body).toMatchObject({ total: 1, page: 1, per_page: 20, items: [{ id: webhookId, events: ['billing.purchase.completed'] }] });

    const updated = await api.patch(`/api/v1/webhooks/${webhookId}`, { token: account.accessToken, json: { events: ['*'], description: 'everything' } });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ id: webhookId, events: ['*'], description: 'everything', metadata: { team: 'billing' } });

    const deleted = await api.delete(`/api/v1/webhooks/${webhookId}`, { token: account.accessToken });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ success: true, message: expect.any(String) });
    expect((await api.get(`/api/v1/webhooks/${webhookId}`, { token: account.accessToken })).status).toBe(404);
  });
});

describe('event delivery', () => {
  it('delivers a purchase event, signed so Stripe and Standard Webhooks libraries verify it, to subscribed endpoints only', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const billing = await createWebhook(api, account, { url: receiver.url, events: ['billing.purchase.completed'] });
    const everything = await createWebhook(api, account, { url: `${receiver.url}?all`, events: ['*'] });
    await createWebhook(api, account, { url: `${receiver.url}?agents`, events: ['agent.created'] });

    const purchase = await api.post<{ id: string }>('/api/v1/billing/purchases', { token: account.accessToken, json: { credits: 250 } });
    expect(purchase.status).toBe(201);
    const arrived = await waitForTenant(account.tenantId, 2);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(deliveriesOf(account.tenantId)).toHaveLength(2);

    expect(arrived.map((delivery) => delivery.path).sort()).toEqual(['/hooks', '/hooks?all']);
    const events = arrived.map((delivery) => {
      const secret = delivery.path === '/hooks' ? billing.signing_secret : everything.signing_secret;
      return { delivery, webhookEvent: verifyDelivery(delivery, secret) };
    });
    for (const { delivery, webhookEvent } of events) {
      expect(JSON.parse(delivery.body)).toEqual({
        id: expect.stringMatching(id('evt')),
        type: 'billing.purchase.completed',
        created_at: expect.stringMatching(ISO_MS),
        data: { purchase_id: purchase.body.id, credits: 250, balance: 1250 },
        tenant_id: account.tenantId,
        api_version: '2026-11-01',
      });
      expect(delivery.headers['x-service-event-id']).toBe(webhookEvent.id);
      expect(delivery.headers['x-service-event-type']).toBe('billing.purchase.completed');
      expect(delivery.headers['x-service-delivery-id']).toMatch(id('dlv'));
      expect(delivery.headers['webhook-id']).toBe(webhookEvent.id);
    }
    expect(new Set(events.map(({ webhookEvent }) => webhookEvent.id)).size).toBe(1);

    const log = await api.get<{ items: Record<string, unknown>[] }>(`/api/v1/webhooks/${billing.id}/deliveries`, { token: account.accessToken });
    expect(log.status).toBe(200);
    expect(log.body).toMatchObject({ total: 1, next_cursor: null });
    expect(log.body.items[0]).toEqual({
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
    const api = new Api();
    const account = await newAccount(api);
    const supplied = 'my own secret of 24 chars';
    const webhook = await createWebhook(api, account, { url: receiver.url, events: ['billing.purchase.completed'], secret: supplied });
    expect(webhook.signing_secret).toBe(supplied);
    await api.post('/api/v1/billing/purchases', { token: account.accessToken, json: { credits: 1 } });
    const [first] = await waitForTenant(account.tenantId, 1);
    expect(verifyDelivery(first!, supplied).type).toBe('billing.purchase.completed');

    const rotated = await api.post<{ signing_secret: string }>(`/api/v1/webhooks/${webhook.id}/rotate-secret`, { token: account.accessToken });
    expect(rotated.status).toBe(200);
    expect(rotated.body.signing_secret).toMatch(/^whsec_/);
    await api.post('/api/v1/billing/purchases', { token: account.accessToken, json: { credits: 2 } });
    const [, second] = await waitForTenant(account.tenantId, 2);
    expect(verifyDelivery(second!, rotated.body.signing_secret).data).toMatchObject({ credits: 2 });
    expect(() => verifyDelivery(second!, supplied)).toThrow();
  });

  it('sends a test event now and logs it', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const webhook = await createWebhook(api, account, { url: receiver.url, events: ['*'] });
    const tested = await api.post(`/api/v1/webhooks/${webhook.id}/test`, { token: account.accessToken, json: { event_type: 'agent.created' } });
    expect(tested.status).toBe(200);
    expect(tested.body).toEqual({
      success: true,
      delivery_id: expect.stringMatching(id('dlv')),
      response_status: 200,
      response_time_ms: expect.any(Number),
    });
    const [delivery] = await waitForTenant(account.tenantId, 1);
    expect(verifyDelivery(delivery!, webhook.signing_secret).type).toBe('agent.created');
    const log = await api.get<{ items: { id: string; attempts: number }[] }>(`/api/v1/webhooks/${webhook.id}/deliveries`, { token: account.accessToken });
    expect(log.body.items.map((item) => item.id)).toEqual([tested.body.delivery_id]);
  });
});
