import { randomBytes } from 'node:crypto';
import { buildGateway, loadGatewayConfig, type Gateway } from '@agent-platform/gateway';
import { buildIdentityService, loadIdentityConfig, type IdentityService } from '@agent-platform/identity';
import { createLogger } from '@agent-platform/kit';
import { NatsEventBus } from '@agent-platform/kit/events';
import { startTestNatsServer, type TestNatsServer } from '@agent-platform/kit/testing';
import { buildWebhookDispatcherService, loadWebhookDispatcherConfig, type WebhookDispatcherService } from '@agent-platform/webhook-dispatcher';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Receiver, verifyDelivery } from '../e2e/harness/receiver.js';

const ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const logger = createLogger({ service: 'nats-outage-test', level: 'silent' });
const run = randomBytes(4).toString('hex');
const databases = { identity: `outage_identity_${run}`, webhooks: `outage_webhooks_${run}` };
const urlOf = (name: string) => Object.assign(new URL(ADMIN_URL), { pathname: `/${name}` }).toString();

let nats: TestNatsServer;
let buses: NatsEventBus[] = [];
let identity: IdentityService;
let dispatcher: WebhookDispatcherService;
let gateway: Gateway;
let receiver: Receiver;
let base: string;

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  await client.query(sql).finally(() => client.end());
}

async function call<T>(method: string, path: string, body?: unknown, token?: string): Promise<{ status: number; body: T }> {
  const response = await fetch(`${base}/api/v1${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as T };
}

beforeAll(async () => {
  nats = await startTestNatsServer();
  for (const name of Object.values(databases)) await admin(`CREATE DATABASE ${name}`);
  const identityBus = await NatsEventBus.connect({ servers: nats.url, name: 'identity', logger });
  const dispatcherBus = await NatsEventBus.connect({ servers: nats.url, name: 'webhook-dispatcher', logger });
  buses = [identityBus, dispatcherBus];
  identity = await buildIdentityService(
    // A short back-off ceiling so the relay notices the server's return within the test's patience.
    loadIdentityConfig({ DATABASE_URL: urlOf(databases.identity), GRPC_HOST: '127.0.0.1', GRPC_PORT: '0', OUTBOX_RETRY_MAX_MS: '1000' }),
    { logger, bus: identityBus },
  );
  dispatcher = await buildWebhookDispatcherService(
    loadWebhookDispatcherConfig({
      DATABASE_URL: urlOf(databases.webhooks),
      GRPC_HOST: '127.0.0.1',
      GRPC_PORT: '0',
      WEBHOOK_SECRET_KEY: randomBytes(32).toString('base64'),
      ALLOW_PRIVATE_NETWORK_URLS: 'true',
    }),
    { logger, bus: dispatcherBus },
  );
  const { port: dispatcherPort } = await dispatcher.start();
  const { port: identityPort } = await identity.start();
  gateway = await buildGateway(
    loadGatewayConfig({ HOST: '127.0.0.1', PORT: '0', IDENTITY_ADDR: `127.0.0.1:${identityPort}`, WEBHOOK_DISPATCHER_ADDR: `127.0.0.1:${dispatcherPort}` }),
    { logger },
  );
  base = (await gateway.start()).url;
  receiver = await Receiver.start();
}, 60_000);

afterAll(async () => {
  await gateway.stop();
  await identity.stop();
  await dispatcher.stop();
  for (const bus of buses) await bus.close();
  await receiver.close();
  await nats.dispose();
  for (const name of Object.values(databases)) await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
});

describe('a NATS outage', () => {
  it('keeps the API accepting writes and loses no event: all are delivered once NATS is back', async () => {
    const email = `outage-${run}@example.com`;
    const password = 'a long enough password';
    expect((await call('POST', '/auth/register', { email, password })).status).toBe(201);
    const { body: login } = await call<{ access_token: string }>('POST', '/auth/login', { username: email, password });
    const token = login.access_token;
    const webhook = await call<{ signing_secret: string }>('POST', '/webhooks', { url: receiver.url, events: ['billing.purchase.completed'] }, token);
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
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(receiver.received).toHaveLength(1);

    await nats.start();
    await receiver.waitFor(6, 30_000);
    const delivered = receiver.received.map((delivery) => verifyDelivery(delivery, webhook.body.signing_secret).data.purchase_id);
    for (const purchaseId of during) expect(delivered).toContain(purchaseId);
    // The events keep their order: the relay publishes the outbox oldest first.
    expect(delivered.slice(1)).toEqual(during);
  }, 60_000);
});
