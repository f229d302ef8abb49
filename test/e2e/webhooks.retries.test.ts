import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Api, newAccount } from './harness/client.js';
import { Receiver, verifyDelivery } from './harness/receiver.js';

// The suites run with WEBHOOK_RETRY_SCHEDULE=0,1,1,1,1: five attempts a second apart.
let receiver: Receiver;
beforeAll(async () => {
  receiver = await Receiver.start();
});
afterAll(() => receiver.close());

interface DeliveryLog {
  items: { id: string; status: string; attempts: number; response_status: number | null; error: string | null; next_attempt_at: string | null }[];
}

interface DeliveryDetail {
  id: string;
  status: string;
  attempts: number;
  attempt_log: { number: number; started_at: string; response_status: number | null; response_time_ms: number; outcome: string; error: string | null }[];
}

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
    const api = new Api();
    const account = await newAccount(api);
    receiver.status = 500;
    const created = await api.post<{ id: string; signing_secret: string }>('/api/v1/webhooks', {
      token: account.accessToken,
      json: { url: receiver.url, events: ['billing.purchase.completed'] },
    });
    const webhookId = created.body.id;
    await api.post('/api/v1/billing/purchases', { token: account.accessToken, json: { credits: 5 } });

    const failed = await until('five failed attempts', async () => {
      const log = await api.get<DeliveryLog>(`/api/v1/webhooks/${webhookId}/deliveries`, { token: account.accessToken });
      const [delivery] = log.body.items;
      return delivery?.status === 'failed' ? delivery : undefined;
    });
    expect(failed).toMatchObject({ attempts: 5, response_status: 500, next_attempt_at: null, error: expect.any(String) });
    const attempts = receiver.received.filter((delivery) => delivery.body.includes(account.tenantId));
    expect(attempts).toHaveLength(5);
    // Attempt 1 at once, then about a second apart (the compressed schedule).
    const gaps = attempts.slice(1).map((attempt, index) => attempt.receivedAt - attempts[index]!.receivedAt);
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(900);
    const sameEvent = new Set(attempts.map((attempt) => verifyDelivery(attempt, created.body.signing_secret).id));
    expect(sameEvent.size).toBe(1);

    const webhook = await api.get(`/api/v1/webhooks/${webhookId}`, { token: account.accessToken });
    expect(webhook.body.status).toBe('failed');

    // A failed endpoint gets nothing new.
    await api.post('/api/v1/billing/purchases', { token: account.accessToken, json: { credits: 6 } });
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(receiver.received.filter((delivery) => delivery.body.includes(account.tenantId))).toHaveLength(5);

    receiver.status = 200;
    const enabled = await api.post(`/api/v1/webhooks/${webhookId}/enable`, { token: account.accessToken });
    expect(enabled.status).toBe(200);
    expect(enabled.body.status).toBe('active');
    await api.post('/api/v1/billing/purchases', { token: account.accessToken, json: { credits: 7 } });
    await until('a delivery after enabling', () =>
      Promise.resolve(receiver.received.some((delivery) => delivery.body.includes(account.tenantId) && delivery.body.includes('"credits":7')) || undefined),
    );

    // Replaying the failed delivery sends the same event again, and this time it lands.
    const retried = await api.post(`/api/v1/webhooks/${webhookId}/deliveries/${failed.id}/retry`, { token: account.accessToken });
    expect(retried.status).toBe(202);
    const replayed = await until('the replayed delivery', async () => {
      const log = await api.get<DeliveryLog>(`/api/v1/webhooks/${webhookId}/deliveries`, { token: account.accessToken });
      const delivery = log.body.items.find((item) => item.id === failed.id);
      return delivery?.status === 'delivered' ? delivery : undefined;
    });
    expect(replayed.attempts).toBe(6);
    expect(replayed.response_status).toBe(200);

    // The delivery's own page keeps every attempt, the five that failed and the replay that landed.
    const detail = await api.get<DeliveryDetail>(`/api/v1/webhooks/${webhookId}/deliveries/${failed.id}`, { token: account.accessToken });
    expect(detail.status).toBe(200);
    expect(detail.body).toMatchObject({ id: failed.id, status: 'delivered', attempts: 6 });
    expect(detail.body.attempt_log.map(({ number, outcome, response_status }) => ({ number, outcome, response_status }))).toEqual([
      ...[1, 2, 3, 4, 5].map((number) => ({ number, outcome: 'failed', response_status: 500 })),
      { number: 6, outcome: 'delivered', response_status: 200 },
    ]);
    for (const attempt of detail.body.attempt_log) {
      expect(attempt.started_at).toEqual(expect.any(String));
      expect(attempt.error === null, `attempt ${attempt.number}`).toBe(attempt.outcome === 'delivered');
    }
  });
});
