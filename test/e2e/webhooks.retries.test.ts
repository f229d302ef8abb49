import { verifyWebhook } from '@agent-platform/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Api, newAccount } from './harness/client.js';
import { Receiver } from './harness/receiver.js';
import { expectStatus } from './harness/results.js';

// The suites run with WEBHOOK_RETRY_SCHEDULE=0,1,1,1,1: five attempts a second apart.
let receiver: Receiver;
beforeAll(async () => {
  receiver = await Receiver.start();
});
afterAll(() => receiver.close());

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('retries', () => {
  it('retries on the schedule, fails the endpoint after the 5th attempt, and resumes once enabled', async () => {
    const account = await newAccount(new Api());
    const { client } = account;
    const buy = async (credits: number) => expectStatus(await client.POST('/api/v1/billing/purchases', { body: { credits } }), 201);
    receiver.status = 500;
    const created = expectStatus(await client.POST('/api/v1/webhooks', { body: { url: receiver.url, events: ['billing.purchase.completed'] } }), 201);
    const webhook = { params: { path: { webhook_id: created.id } } };
    const deliveries = async () => expectStatus(await client.GET('/api/v1/webhooks/{webhook_id}/deliveries', webhook)).items;
    await buy(5);

    const failed = await until('five failed attempts', async () => {
      const [delivery] = await deliveries();
      return delivery?.status === 'failed' ? delivery : undefined;
    });
    expect(failed).toMatchObject({ attempts: 5, response_status: 500, next_attempt_at: null, error: expect.any(String) });
    const attempts = receiver.received.filter((delivery) => delivery.body.includes(account.tenantId));
    expect(attempts).toHaveLength(5);
    // Attempt 1 at once, then about a second apart (the compressed schedule).
    const gaps = attempts.slice(1).map((attempt, index) => attempt.receivedAt - attempts[index]!.receivedAt);
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(900);
    const sameEvent = new Set(attempts.map((attempt) => verifyWebhook(attempt.body, attempt.headers, created.signing_secret).id));
    expect(sameEvent.size).toBe(1);

    expect(expectStatus(await client.GET('/api/v1/webhooks/{webhook_id}', webhook)).status).toBe('failed');

    // A failed endpoint gets nothing new.
    await buy(6);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(receiver.received.filter((delivery) => delivery.body.includes(account.tenantId))).toHaveLength(5);

    receiver.status = 200;
    const enabled = expectStatus(await client.POST('/api/v1/webhooks/{webhook_id}/enable', webhook));
    expect(enabled.status).toBe('active');
    await buy(7);
    await until('a delivery after enabling', () =>
      Promise.resolve(receiver.received.some((delivery) => delivery.body.includes(account.tenantId) && delivery.body.includes('"credits":7')) || undefined),
    );

    // Replaying the failed delivery sends the same event again, and this time it lands.
    const thatDelivery = { params: { path: { webhook_id: created.id, delivery_id: failed.id } } };
    expectStatus(await client.POST('/api/v1/webhooks/{webhook_id}/deliveries/{delivery_id}/retry', thatDelivery), 202);
    const replayed = await until('the replayed delivery', async () => {
      const delivery = (await deliveries()).find((item) => item.id === failed.id);
      return delivery?.status === 'delivered' ? delivery : undefined;
    });
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
