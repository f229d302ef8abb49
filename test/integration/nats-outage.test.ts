import { randomBytes } from 'node:crypto';
import { DEFAULT_TEST_DATABASE_URL, startReceiver, startTestNatsServer, type Receiver, type TestNatsServer } from '@agent-platform/kit/testing';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Api } from '../e2e/harness/client.js';
import { verifyDelivery } from '../e2e/harness/deliveries.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';

const run = randomBytes(4).toString('hex');
let nats: TestNatsServer;
let platform: TestPlatform;
let receiver: Receiver;

async function call<T>(method: string, path: string, body?: unknown, token?: string): Promise<{ status: number; body: T }> {
  return new Api(platform.url).request<T>(method, `/api/v1${path}`, { json: body, ...(token ? { token } : {}) });
}

/** How many of these purchases' events the identity service's outbox still holds unpublished. */
async function heldInOutbox(purchaseIds: string[]): Promise<number> {
  const url = new URL(process.env.TEST_DATABASE_URL ?? DEFAULT_TEST_DATABASE_URL);
  url.pathname = `/${platform.databases.identity}`;
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    const { rows } = await client.query<{ count: string }>(
      "select count(*)::text as count from outbox where published_at is null and payload->'data'->>'purchase_id' = any($1)",
      [purchaseIds],
    );
    return Number(rows[0]!.count);
  } finally {
    await client.end();
  }
}

beforeAll(async () => {
  nats = await startTestNatsServer();
  // Every service on its own NATS connection, as in the distributed mode; a short back-off ceiling
  // so the relay notices the server's return within the test's patience.
  platform = await startTestPlatform({ NATS_URL: nats.url, OUTBOX_RETRY_MAX_MS: '1000', ALLOW_PRIVATE_NETWORK_URLS: 'true' });
  receiver = await startReceiver();
}, 60_000);

afterAll(async () => {
  await platform.stop();
  await receiver.close();
  await nats.dispose();
});

describe('a NATS outage', () => {
  it('keeps the API accepting writes and loses no event: all are delivered once NATS is back', async () => {
    const email = `outage-${run}@example.com`;
    const password = 'a long enough password';
    expect((await call('POST', '/auth/register', { email, password })).status).toBe(201);
    const { body: login } = await call<{ access_token: string }>('POST', '/auth/login', { username: email, password });
    const token = login.access_token;
    const webhook = await call<{ signing_secret: string }>('POST', '/webhooks', { url: receiver.url('/hooks'), events: ['billing.purchase.completed'] }, token);
    expect(webhook.status).toBe(201);

    expect((await call('POST', '/billing/purchases', { credits: 1 }, token)).status).toBe(201);
    await receiver.waitFor(1);

    await nats.stop();
    const during: string[] = [];
    for (let n = 2; n <= 6; n += 1) {
      const purchase = await call<{ id: string }>('POST', '/billing/purchases', { credits: n }, token);
      expect(purchase.status).toBe(201);
      during.push(purchase.body.id);
    }
    // NATS has exited, so nothing written meanwhile can be published: the outbox keeps all five.
    expect(await heldInOutbox(during)).toBe(5);
    expect(receiver.received()).toHaveLength(1);

    const restarted = Date.now();
    await nats.start();
    const deliveries = await receiver.waitFor(6, { timeoutMs: 30_000 });
    // None reached the endpoint while NATS was away, however long that was: each came after it was back.
    for (const delivery of deliveries.slice(1)) expect(delivery.receivedAt).toBeGreaterThanOrEqual(restarted);
    const delivered = receiver.received().map((delivery) => verifyDelivery(delivery, webhook.body.signing_secret).data.purchase_id);
    for (const purchaseId of during) expect(delivered).toContain(purchaseId);
    // The events keep their order: the relay publishes the outbox oldest first.
    expect(delivered.slice(1)).toEqual(during);
  }, 60_000);
});
