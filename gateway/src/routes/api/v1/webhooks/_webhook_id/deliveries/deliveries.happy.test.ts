import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { as, ISO_MS, matching, newAccount, newWebhook, startHarness, type Harness } from '../../../../../../testing/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

const DELIVERY_ID = /^dlv_[0-9A-HJKMNP-TV-Z]{26}$/;
const EVENT_ID = /^evt_[0-9A-HJKMNP-TV-Z]{26}$/;

interface Page {
  items: { id: string }[];
  total: number;
  next_cursor: string | null;
}

describe('POST /webhooks/{webhook_id}/test', () => {
  it('sends one synthetic event and answers with the outcome; the delivery log records it', async () => {
    const account = await newAccount(h.app);
    const webhook = await newWebhook(h.app, account.token);
    const tested = await as(h.app, account.token, { method: 'POST', url: `/api/v1/webhooks/${webhook.id}/test`, payload: { event_type: 'agent.created' } });
    expect(tested.statusCode).toBe(200);
    expect(tested.json()).not.toHaveProperty('error');
    expect(h.webhooks.callsOf('testWebhook').at(-1)?.request).toEqual({ webhookId: webhook.id, eventType: 'agent.created' });
    expect(tested.json()).toEqual({ success: true, delivery_id: matching(DELIVERY_ID), response_status: 200, response_time_ms: 12 });

    const log = await as(h.app, account.token, { method: 'GET', url: `/api/v1/webhooks/${webhook.id}/deliveries` });
    expect(log.statusCode).toBe(200);
    expect(log.json()).toEqual({
      items: [
        {
          id: tested.json<{ delivery_id: string }>().delivery_id,
          event_id: matching(EVENT_ID),
          event_type: 'agent.created',
          status: 'delivered',
          response_status: 200,
          response_time_ms: 12,
          attempts: 1,
          delivered_at: matching(ISO_MS),
          next_attempt_at: null,
          error: null,
          created_at: matching(ISO_MS),
        },
      ],
      total: 1,
      next_cursor: null,
    });
  });

  it('answers 200 with success false when the receiver fails; null response_status when none answered', async () => {
    const account = await newAccount(h.app);
    const silent = await newWebhook(h.app, account.token, { url: 'https://unreachable.example.com/hooks' });
    const refused = await as(h.app, account.token, { method: 'POST', url: `/api/v1/webhooks/${silent.id}/test`, payload: { event_type: 'billing.credits.low' } });
    expect(refused.statusCode).toBe(200);
    expect(refused.json()).toEqual({ success: false, delivery_id: matching(DELIVERY_ID), response_status: null, response_time_ms: 12, error: 'connect ECONNREFUSED' });
    const log = await as(h.app, account.token, { method: 'GET', url: `/api/v1/webhooks/${silent.id}/deliveries` });
    expect(log.json()).toMatchObject({
      items: [{ status: 'failed', response_status: null, attempts: 1, delivered_at: null, next_attempt_at: null, error: 'connect ECONNREFUSED' }],
    });

    const failing = await newWebhook(h.app, account.token, { url: 'https://receiver.example.com/fail' });
    const answered = await as(h.app, account.token, { method: 'POST', url: `/api/v1/webhooks/${failing.id}/test`, payload: { event_type: 'agent.created' } });
    expect(answered.json()).toMatchObject({ success: false, response_status: 500, error: 'The receiver answered 500.' });
  });
});

describe('GET /webhooks/{webhook_id}/deliveries', () => {
  it('shows a delivery not yet attempted with nulls, field by field', async () => {
    const account = await newAccount(h.app);
    const webhook = await newWebhook(h.app, account.token);
    const row = h.webhooks.model.webhooks.get(webhook.id);
    if (!row) throw new Error('no row');
    const pending = h.webhooks.model.addDelivery(row, { eventType: 'workflow.execution.completed' });
    const log = await as(h.app, account.token, { method: 'GET', url: `/api/v1/webhooks/${webhook.id}/deliveries` });
    expect(log.json()).toEqual({
      items: [
        {
          id: pending.id,
          event_id: pending.eventId,
          event_type: 'workflow.execution.completed',
          status: 'pending',
          response_status: null,
          response_time_ms: 0,
          attempts: 0,
          delivered_at: null,
          next_attempt_at: pending.nextAttemptAt?.toISOString(),
          error: null,
          created_at: pending.createdAt.toISOString(),
        },
      ],
      total: 1,
      next_cursor: null,
    });
  });

  it('pages newest first with limit and cursor, default limit 20', async () => {
    const account = await newAccount(h.app);
    const webhook = await newWebhook(h.app, account.token);
    const row = h.webhooks.model.webhooks.get(webhook.id);
    if (!row) throw new Error('no row');
    const ids = Array.from({ length: 5 }, () => h.webhooks.model.addDelivery(row).id).reverse();
    const url = `/api/v1/webhooks/${webhook.id}/deliveries`;

    const seen: string[] = [];
    let cursor: string | null = null;
    const pages: Page[] = [];
    do {
      const query: Record<string, string> = cursor === null ? { limit: '2' } : { limit: '2', cursor };
      const response = await as(h.app, account.token, { method: 'GET', url, query });
      expect(response.statusCode).toBe(200);
      const page = response.json<Page>();
      pages.push(page);
      seen.push(...page.items.map((item) => item.id));
      cursor = page.next_cursor;
    } while (cursor !== null && pages.length < 10);
    expect(seen).toEqual(ids);
    expect(pages.map((page) => [page.items.length, page.total, typeof page.next_cursor])).toEqual([
      [2, 5, 'string'],
      [2, 5, 'string'],
      [1, 5, 'object'],
    ]);

    expect(h.webhooks.callsOf('listDeliveries').at(-1)?.request).toEqual({ webhookId: webhook.id, page: { limit: 2, cursor: pages[1]?.next_cursor } });
    const all = await as(h.app, account.token, { method: 'GET', url });
    expect(all.json<Page>().items).toHaveLength(5);
    expect(h.webhooks.callsOf('listDeliveries').at(-1)?.request).toEqual({ webhookId: webhook.id, page: { limit: 20, cursor: undefined } });
  });
});

describe('GET /webhooks/{webhook_id}/deliveries/{delivery_id}', () => {
  it("answers the delivery's list fields plus every attempt, oldest first, field by field", async () => {
    const account = await newAccount(h.app);
    const webhook = await newWebhook(h.app, account.token);
    const row = h.webhooks.model.webhooks.get(webhook.id);
    if (!row) throw new Error('no row');
    const at = (seconds: number) => new Date(Date.UTC(2026, 10, 1, 12, 0, seconds));
    const delivery = h.webhooks.model.addDelivery(row, {
      eventType: 'billing.purchase.completed',
      status: 'delivered',
      attempts: [
        { number: 1, startedAt: at(0), responseStatus: 0, responseTimeMs: 10_000, outcome: 'failed', error: 'timed out after 10000 ms' },
        { number: 2, startedAt: at(60), responseStatus: 500, responseTimeMs: 31, outcome: 'failed', error: 'HTTP 500' },
        { number: 3, startedAt: at(360), responseStatus: 200, responseTimeMs: 8, outcome: 'delivered' },
      ],
      deliveredAt: at(361),
      nextAttemptAt: undefined,
    });

    const detail = await as(h.app, account.token, { method: 'GET', url: `/api/v1/webhooks/${webhook.id}/deliveries/${delivery.id}` });
    expect(detail.statusCode).toBe(200);
    expect(h.webhooks.callsOf('getDelivery').at(-1)?.request).toEqual({ webhookId: webhook.id, deliveryId: delivery.id });
    expect(detail.json()).toEqual({
      id: delivery.id,
      event_id: delivery.eventId,
      event_type: 'billing.purchase.completed',
      status: 'delivered',
      response_status: 200,
      response_time_ms: 8,
      attempts: 3,
      delivered_at: '2026-11-01T12:06:01.000Z',
      next_attempt_at: null,
      error: 'HTTP 500',
      created_at: delivery.createdAt.toISOString(),
      attempt_log: [
        { number: 1, started_at: '2026-11-01T12:00:00.000Z', response_status: null, response_time_ms: 10_000, outcome: 'failed', error: 'timed out after 10000 ms' },
        { number: 2, started_at: '2026-11-01T12:01:00.000Z', response_status: 500, response_time_ms: 31, outcome: 'failed', error: 'HTTP 500' },
        { number: 3, started_at: '2026-11-01T12:06:00.000Z', response_status: 200, response_time_ms: 8, outcome: 'delivered', error: null },
      ],
    });
    // The list item is the same delivery without its attempts.
    const log = await as(h.app, account.token, { method: 'GET', url: `/api/v1/webhooks/${webhook.id}/deliveries` });
    expect({ ...log.json<{ items: object[] }>().items[0], attempt_log: detail.json<{ attempt_log: unknown }>().attempt_log }).toEqual(detail.json());
  });

  it('answers an empty attempt_log before the first attempt, also under the /v1 alias', async () => {
    const account = await newAccount(h.app);
    const webhook = await newWebhook(h.app, account.token);
    const row = h.webhooks.model.webhooks.get(webhook.id);
    if (!row) throw new Error('no row');
    const pending = h.webhooks.model.addDelivery(row);
    const detail = await as(h.app, account.token, { method: 'GET', url: `/v1/webhooks/${webhook.id}/deliveries/${pending.id}` });
    expect(detail.statusCode).toBe(200);
    expect(detail.json()).toMatchObject({ id: pending.id, status: 'pending', attempts: 0, response_status: null, error: null, attempt_log: [] });
  });
});

describe('POST /webhooks/{webhook_id}/deliveries/{delivery_id}/retry', () => {
  it('answers 202 with the delivery scheduled for a new attempt', async () => {
    const account = await newAccount(h.app);
    const webhook = await newWebhook(h.app, account.token, { url: 'https://receiver.example.com/fail' });
    const tested = await as(h.app, account.token, { method: 'POST', url: `/api/v1/webhooks/${webhook.id}/test`, payload: { event_type: 'agent.created' } });
    const deliveryId = tested.json<{ delivery_id: string }>().delivery_id;

    const retried = await as(h.app, account.token, { method: 'POST', url: `/api/v1/webhooks/${webhook.id}/deliveries/${deliveryId}/retry` });
    expect(retried.statusCode).toBe(202);
    expect(h.webhooks.callsOf('retryDelivery').at(-1)?.request).toEqual({ webhookId: webhook.id, deliveryId });
    expect(retried.json()).toEqual({
      id: deliveryId,
      event_id: matching(EVENT_ID),
      event_type: 'agent.created',
      status: 'pending',
      response_status: 500,
      response_time_ms: 12,
      attempts: 1,
      delivered_at: null,
      next_attempt_at: matching(ISO_MS),
      error: 'The receiver answered 500.',
      created_at: matching(ISO_MS),
    });
  });

  it('is reachable under the /v1 alias too', async () => {
    const account = await newAccount(h.app);
    const webhook = await newWebhook(h.app, account.token);
    const tested = await as(h.app, account.token, { method: 'POST', url: `/v1/webhooks/${webhook.id}/test`, payload: { event_type: 'agent.created' } });
    expect(tested.statusCode).toBe(200);
    const deliveryId = tested.json<{ delivery_id: string }>().delivery_id;
    expect((await as(h.app, account.token, { method: 'GET', url: `/v1/webhooks/${webhook.id}/deliveries` })).json()).toMatchObject({ items: [{ id: deliveryId }] });
    expect((await as(h.app, account.token, { method: 'POST', url: `/v1/webhooks/${webhook.id}/deliveries/${deliveryId}/retry` })).statusCode).toBe(202);
  });
});

describe('the deadline of a test delivery', () => {
  it('outlasts the general gRPC deadline, since it waits for the receiver', async () => {
    const slow = await startHarness({ GRPC_DEADLINE_MS: '200', WEBHOOK_TEST_DEADLINE_MS: '3000' });
    try {
      const account = await newAccount(slow.app);
      const webhook = await newWebhook(slow.app, account.token);
      slow.webhooks.testDelayMs = 600;
      const tested = await as(slow.app, account.token, { method: 'POST', url: `/api/v1/webhooks/${webhook.id}/test`, payload: { event_type: 'agent.created' } });
      expect(tested.statusCode, tested.body).toBe(200);
      expect(tested.json()).toMatchObject({ success: true });
    } finally {
      await slow.close();
    }
  });
});
