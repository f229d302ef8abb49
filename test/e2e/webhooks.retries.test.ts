import { verifyWebhook } from '@agent-platform/client';
import { startReceiver, type ReceivedRequest, type Receiver } from '@agent-platform/kit/testing';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Api, newAccount } from './harness/client.js';
import { ofTenant } from './harness/deliveries.js';
import { expectStatus } from './harness/results.js';

// The suites run with WEBHOOK_RETRY_SCHEDULE=0,1,1,1,1: five attempts a second apart.
let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(() => receiver.close());

// A delivery's record is written just after its response: no event tells the test, so it asks.
const RECORDED = { timeout: 10_000, interval: 50 };

describe('retries', () => {
  it('retries on the schedule, fails the endpoint after the 5th attempt, and resumes once enabled', async () => {
    const account = await newAccount(new Api());
    const { client } = account;
    const buy = async (credits: number) => expectStatus(await client.POST('/api/v1/billing/purchases', { body: { credits } }), 201);
    const mine = (request: ReceivedRequest) => request.path === '/hooks' && ofTenant(account.tenantId)(request);
    receiver.answer((request) => ({ status: mine(request) ? 500 : 200 }));
    const created = expectStatus(await client.POST('/api/v1/webhooks', { body: { url: receiver.url('/hooks'), events: ['billing.purchase.completed'] } }), 201);
    const webhook = { params: { path: { webhook_id: created.id } } };
    const deliveries = async () => expectStatus(await client.GET('/api/v1/webhooks/{webhook_id}/deliveries', webhook)).items;
    await buy(5);

    // Five attempts over four seconds of retry schedule, then the record of the last.
    const attempts = await receiver.waitFor(5, { match: mine, timeoutMs: 20_000 });
    const failed = await vi.waitFor(async () => {
      const [delivery] = await deliveries();
      expect(delivery?.status).toBe('failed');
      return delivery!;
    }, RECORDED);
    expect(failed).toMatchObject({ attempts: 5, response_status: 500, next_attempt_at: null, error: expect.any(String) });
    expect(attempts).toHaveLength(5);
    // Attempt 1 at once, then about a second apart (the compressed schedule).
    const gaps = attempts.slice(1).map((attempt, index) => attempt.receivedAt - attempts[index]!.receivedAt);
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(900);
    const sameEvent = new Set(attempts.map((attempt) => verifyWebhook(attempt.body, attempt.headers, created.signing_secret).id));
    expect(sameEvent.size).toBe(1);

    expect(expectStatus(await client.GET('/api/v1/webhooks/{webhook_id}', webhook)).status).toBe('failed');

    // A failed endpoint gets nothing new. The marker: another endpoint of the tenant receives the
    // purchase, so the fan-out, which makes every endpoint's delivery in one statement, is done;
    // the failed endpoint got no delivery to send, and its one delivery has no attempt left.
    const marker = expectStatus(await client.POST('/api/v1/webhooks', { body: { url: receiver.url('/hooks/marker'), events: ['billing.purchase.completed'] } }), 201);
    await buy(6);
    await receiver.waitFor(1, { match: (request) => request.path === '/hooks/marker' && request.body.includes('"credits":6') });
    expect((await deliveries()).map((delivery) => delivery.id)).toEqual([failed.id]);
    expect(receiver.received(mine)).toHaveLength(5);
    expectStatus(await client.DELETE('/api/v1/webhooks/{webhook_id}', { params: { path: { webhook_id: marker.id } } }));

    receiver.answer({ status: 200 });
    const enabled = expectStatus(await client.POST('/api/v1/webhooks/{webhook_id}/enable', webhook));
    expect(enabled.status).toBe('active');
    await buy(7);
    await receiver.waitFor(1, { match: (request) => mine(request) && request.body.includes('"credits":7') });

    // Replaying the failed delivery sends the same event again, and this time it lands.
    const thatDelivery = { params: { path: { webhook_id: created.id, delivery_id: failed.id } } };
    expectStatus(await client.POST('/api/v1/webhooks/{webhook_id}/deliveries/{delivery_id}/retry', thatDelivery), 202);
    // Its sixth attempt reaches the endpoint, then is recorded.
    await receiver.waitFor((requests) => requests.filter((request) => request.body.includes('"credits":5')).length === 6, { match: mine });
    const replayed = await vi.waitFor(async () => {
      const delivery = (await deliveries()).find((item) => item.id === failed.id);
      expect(delivery?.status).toBe('delivered');
      return delivery!;
    }, RECORDED);
    expect(replayed.attempts).toBe(6);
    expect(replayed.response_status).toBe(200);

    // The delivery's own page keeps every attempt, the five that failed and the replay that landed.
    const detail = expectStatus(await client.GET('/api/v1/webhooks/{webhook_id}/deliveries/{delivery_id}', thatDelivery));
    expect(detail).toMatchObject({ id: failed.id, status: 'delivered', attempts: 6 });
    expect(detail.attempt_log.map(({ number, outcome, response_status }) => ({ number, outcome, response_status }))).toEqual([
      ...[1, 2, 3, 4, 5].map((number) => ({ number, outcome: 'failed', response_status: 500 })),
      { number: 6, outcome: 'delivered', response_status: 200 },
    ]);
    for (const attempt of detail.attempt_log) {
      expect(attempt.started_at).toEqual(expect.any(String));
      expect(attempt.error === null, `attempt ${attempt.number}`).toBe(attempt.outcome === 'delivered');
    }
  });
});
