import { freePort, startReceiver, type Answerer, type Receiver } from '@agent-platform/kit/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { newAgent } from '../support/agents.js';
import { ANY_NUMBER, as, expectError, ISO_MS, matching, newAccount, newWebhook, startHarness, type Account, type Harness } from '../support/harness.js';
import { signedWith } from '../support/webhooks.js';

let h: Harness;
let receiver: Receiver;
beforeAll(async () => {
  // Loopback receivers need the development allowance. An event's first attempt waits an hour,
  // so a delivery an event queued stays pending, unattempted; tests and replays are sent at once.
  h = await startHarness({ ALLOW_PRIVATE_NETWORK_URLS: 'true', WEBHOOK_RETRY_SCHEDULE: '3600' });
  receiver = await startReceiver(answer);
});
afterEach(() => {
  h.webhooks.heal();
});
afterAll(async () => {
  await receiver.close();
  await h.close();
});

/** The receiver answers 200, except under /failing/. */
const answer: Answerer = (request) => (request.path.startsWith('/failing/') ? { status: 500 } : { status: 200 });

const DELIVERY_ID = /^dlv_[0-9A-HJKMNP-TV-Z]{26}$/;
const EVENT_ID = /^evt_[0-9A-HJKMNP-TV-Z]{26}$/;

interface Delivery {
  id: string;
  event_id: string;
  status: string;
  created_at: string;
  next_attempt_at: string | null;
}

interface Page {
  items: Delivery[];
  total: number;
  next_cursor: string | null;
}

let endpoints = 0;

/** A webhook of a new account on a path of the receiver no other test uses. */
async function newEndpoint(prefix = '/hooks/', account?: Account) {
  endpoints += 1;
  const owner = account ?? (await newAccount(h.app));
  const webhook = await newWebhook(h.app, owner.token, { url: receiver.url(`${prefix}${endpoints}`) });
  return { account: owner, webhook, path: `${prefix}${endpoints}`, url: `/api/v1/webhooks/${webhook.id}` };
}

function testSend(account: Account, url: string, eventType = 'agent.created') {
  return as(h.app, account.token, { method: 'POST', url: `${url}/test`, payload: { event_type: eventType } });
}

async function log(account: Account, url: string, query: Record<string, string> = {}): Promise<Page> {
  const answer = await as(h.app, account.token, { method: 'GET', url: `${url}/deliveries`, query });
  expect(answer.statusCode, answer.body).toBe(200);
  return answer.json<Page>();
}

describe('POST /webhooks/{webhook_id}/test', () => {
  it('sends one signed synthetic event and answers with the outcome; the delivery log records it', async () => {
    const { account, webhook, path, url } = await newEndpoint();
    const tested = await testSend(account, url);
    expect(tested.statusCode, tested.body).toBe(200);
    const outcome = tested.json<{ delivery_id: string; response_time_ms: number }>();
    expect(outcome).toEqual({ success: true, delivery_id: matching(DELIVERY_ID), response_status: 200, response_time_ms: ANY_NUMBER });

    const [request] = receiver.received(path);
    expect(signedWith(request!, webhook.signing_secret)).toBe(true);
    expect(request!.headers['x-service-delivery-id']).toBe(outcome.delivery_id);
    const event = request!.json as { id: string };
    expect(event).toEqual({ id: matching(EVENT_ID), type: 'agent.created', created_at: matching(ISO_MS), data: { test: true }, tenant_id: account.tenantId, api_version: '2026-11-01' });

    expect(await log(account, url)).toEqual({
      items: [
        {
          id: outcome.delivery_id,
          event_id: event.id,
          event_type: 'agent.created',
          status: 'delivered',
          response_status: 200,
          response_time_ms: outcome.response_time_ms,
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
    const refusing = await newWebhook(h.app, account.token, { url: `http://127.0.0.1:${await freePort()}/hooks` });
    const refused = await testSend(account, `/api/v1/webhooks/${refusing.id}`, 'billing.credits.low');
    expect(refused.statusCode, refused.body).toBe(200);
    expect(refused.json()).toEqual({ success: false, delivery_id: matching(DELIVERY_ID), response_status: null, response_time_ms: ANY_NUMBER, error: 'connection refused' });
    expect(await log(account, `/api/v1/webhooks/${refusing.id}`)).toMatchObject({
      items: [{ event_type: 'billing.credits.low', status: 'failed', response_status: null, attempts: 1, delivered_at: null, next_attempt_at: null, error: 'connection refused' }],
    });

    const { url } = await newEndpoint('/failing/', account);
    const answered = await testSend(account, url);
    expect(answered.json()).toEqual({ success: false, delivery_id: matching(DELIVERY_ID), response_status: 500, response_time_ms: ANY_NUMBER, error: 'HTTP 500' });
  });
});

describe('GET /webhooks/{webhook_id}/deliveries', () => {
  it('shows a delivery not yet attempted with nulls, field by field', async () => {
    const { account, url, path } = await newEndpoint();
    // agent.created, queued for the webhook with its first attempt an hour away.
    await newAgent(h.app, account.token);
    await expect.poll(async () => (await log(account, url)).total, { timeout: 4_000 }).toBe(1);
    const page = await log(account, url);
    const queued = page.items[0]!;
    expect(page).toEqual({
      items: [
        {
          id: matching(DELIVERY_ID),
          event_id: matching(EVENT_ID),
          event_type: 'agent.created',
          status: 'pending',
          response_status: null,
          response_time_ms: 0,
          attempts: 0,
          delivered_at: null,
          next_attempt_at: matching(ISO_MS),
          error: null,
          created_at: matching(ISO_MS),
        },
      ],
      total: 1,
      next_cursor: null,
    });
    expect(Date.parse(queued.next_attempt_at!) - Date.parse(queued.created_at)).toBeGreaterThanOrEqual(3_590_000);
    expect(receiver.received(path)).toEqual([]);
  });

  it('pages newest first with limit and cursor, default limit 20', async () => {
    const { account, url } = await newEndpoint();
    const ids: string[] = [];
    for (let n = 0; n < 21; n += 1) ids.unshift((await testSend(account, url)).json<{ delivery_id: string }>().delivery_id);

    const first = await log(account, url);
    expect(first.items.map((item) => item.id)).toEqual(ids.slice(0, 20));
    expect(first).toMatchObject({ total: 21, next_cursor: matching(/./) });
    expect(await log(account, url, { cursor: first.next_cursor! })).toMatchObject({ items: [{ id: ids[20] }], total: 21, next_cursor: null });

    const seen: string[] = [];
    const pages: Page[] = [];
    let cursor: string | null = null;
    do {
      const page: Page = await log(account, url, cursor === null ? { limit: '8' } : { limit: '8', cursor });
      pages.push(page);
      seen.push(...page.items.map((item) => item.id));
      cursor = page.next_cursor;
    } while (cursor !== null && pages.length < 10);
    expect(seen).toEqual(ids);
    expect(pages.map((page) => [page.items.length, page.total, typeof page.next_cursor])).toEqual([
      [8, 21, 'string'],
      [8, 21, 'string'],
      [5, 21, 'object'],
    ]);
  });
});

describe('GET /webhooks/{webhook_id}/deliveries/{delivery_id}', () => {
  it("answers the delivery's list fields plus every attempt, oldest first, field by field", async () => {
    const { account, webhook, url, path } = await newEndpoint();
    // The receiver fails the first attempt and takes the replay.
    receiver.answer((request) => (request.path === path && receiver.received(path).length === 1 ? { status: 500 } : { status: 200 }));
    try {
      const deliveryId = (await testSend(account, url, 'billing.purchase.completed')).json<{ delivery_id: string }>().delivery_id;
      expect((await as(h.app, account.token, { method: 'POST', url: `${url}/deliveries/${deliveryId}/retry` })).statusCode).toBe(202);
      await receiver.waitFor(2, { match: path });
      const detailUrl = `${url}/deliveries/${deliveryId}`;
      await expect.poll(async () => (await as(h.app, account.token, { method: 'GET', url: detailUrl })).json<Delivery>().status, { timeout: 4_000 }).toBe('delivered');

      const detail = await as(h.app, account.token, { method: 'GET', url: detailUrl });
      const [first, second] = receiver.received(path);
      expect(signedWith(second!, webhook.signing_secret)).toBe(true);
      // A replay sends the same event again.
      expect(second!.body).toBe(first!.body);
      const event = first!.json as { id: string };
      expect(detail.json()).toEqual({
        id: deliveryId,
        event_id: event.id,
        event_type: 'billing.purchase.completed',
        status: 'delivered',
        response_status: 200,
        response_time_ms: ANY_NUMBER,
        attempts: 2,
        delivered_at: matching(ISO_MS),
        next_attempt_at: null,
        error: 'HTTP 500',
        created_at: matching(ISO_MS),
        attempt_log: [
          { number: 1, started_at: matching(ISO_MS), response_status: 500, response_time_ms: ANY_NUMBER, outcome: 'failed', error: 'HTTP 500' },
          { number: 2, started_at: matching(ISO_MS), response_status: 200, response_time_ms: ANY_NUMBER, outcome: 'delivered', error: null },
        ],
      });
      // The list item is the same delivery without its attempts.
      const { attempt_log: _attempts, ...listed } = detail.json<Record<string, unknown>>();
      expect((await log(account, url)).items).toEqual([listed]);
    } finally {
      receiver.answer(answer);
    }
  });

  it('answers an empty attempt_log before the first attempt, also under the /v1 alias', async () => {
    const { account, webhook } = await newEndpoint();
    await newAgent(h.app, account.token);
    await expect.poll(async () => (await log(account, `/v1/webhooks/${webhook.id}`)).total, { timeout: 4_000 }).toBe(1);
    const [pending] = (await log(account, `/v1/webhooks/${webhook.id}`)).items;
    const detail = await as(h.app, account.token, { method: 'GET', url: `/v1/webhooks/${webhook.id}/deliveries/${pending!.id}` });
    expect(detail.statusCode, detail.body).toBe(200);
    expect(detail.json()).toEqual({ ...pending, attempt_log: [] });
  });
});

describe('POST /webhooks/{webhook_id}/deliveries/{delivery_id}/retry', () => {
  it('answers 202 with the delivery scheduled for a new attempt now', async () => {
    const { account, url, path } = await newEndpoint('/failing/');
    const tested = await testSend(account, url);
    const deliveryId = tested.json<{ delivery_id: string }>().delivery_id;

    const retried = await as(h.app, account.token, { method: 'POST', url: `${url}/deliveries/${deliveryId}/retry` });
    expect(retried.statusCode, retried.body).toBe(202);
    const answered = Date.now();
    const delivery = retried.json<Delivery>();
    expect(delivery).toEqual({
      id: deliveryId,
      event_id: matching(EVENT_ID),
      event_type: 'agent.created',
      status: 'pending',
      response_status: 500,
      response_time_ms: ANY_NUMBER,
      attempts: 1,
      delivered_at: null,
      next_attempt_at: matching(ISO_MS),
      error: 'HTTP 500',
      created_at: matching(ISO_MS),
    });
    expect(Date.parse(delivery.next_attempt_at!)).toBeLessThanOrEqual(answered);
    // Due at once: the replay reaches the receiver.
    await receiver.waitFor(2, { match: path });
  });

  it('is reachable under the /v1 alias too', async () => {
    const { account, webhook } = await newEndpoint();
    const tested = await as(h.app, account.token, { method: 'POST', url: `/v1/webhooks/${webhook.id}/test`, payload: { event_type: 'agent.created' } });
    expect(tested.statusCode, tested.body).toBe(200);
    const deliveryId = tested.json<{ delivery_id: string }>().delivery_id;
    expect(await log(account, `/v1/webhooks/${webhook.id}`)).toMatchObject({ items: [{ id: deliveryId }] });
    expect((await as(h.app, account.token, { method: 'POST', url: `/v1/webhooks/${webhook.id}/deliveries/${deliveryId}/retry` })).statusCode).toBe(202);
  });
});

describe('the deadline of a test delivery', () => {
  it('outlasts the general gRPC deadline, since it waits for the receiver', async () => {
    const { account, url, path } = await newEndpoint('/held/');
    receiver.answer((request) => (request.path === path ? { status: 200, hold: 'answer' } : { status: 200 }));
    try {
      const tested = testSend(account, url);
      await receiver.waitFor(1, { match: path });
      // A call made after the test began, cut off by the general deadline: that deadline has passed for the test too.
      h.webhooks.inject('ListWebhooks', { hang: true });
      expectError(await as(h.app, account.token, { method: 'GET', url: '/api/v1/webhooks' }), 503, 'service_unavailable');
      expect(receiver.release(path)).toBe(1);
      const answered = await tested;
      expect(answered.statusCode, answered.body).toBe(200);
      expect(answered.json()).toMatchObject({ success: true, response_status: 200 });
    } finally {
      receiver.answer(answer);
    }
  });
});
