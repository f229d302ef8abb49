import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { newEvent } from '@agent-platform/kit/events';
import { GrpcChannel } from '@agent-platform/kit/grpc';
import { spawnChildService, startReceiver, type TestDatabase } from '@agent-platform/kit/testing';
import { WebhookServiceService } from '@agent-platform/proto/webhooks/v1';
import { describe, expect, vi } from 'vitest';
import { createWebhook, databaseTest, deliveriesOf, newTenant, startInstance, testEnvironment, type Instance, type WebhookClient } from './support/harness.js';
import { NATS_URL, natsFixture, type NatsSpace } from './support/buses.js';
import { verifyDelivery } from './support/verify.js';

const test = databaseTest.extend('nats', { scope: 'file' }, natsFixture());

const TIMEOUT_MS = 1_500;
// DeliveryWorker's lease: the time-out plus a 5 s margin to record the outcome.
const LEASE_MS = TIMEOUT_MS + 5_000;
const ENV = { WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS), WEBHOOK_RETRY_SCHEDULE: '0,1,1,1,1' };
const PACKAGE_DIR = fileURLToPath(new URL('..', import.meta.url));

interface Child {
  process: ChildProcess;
  client: WebhookClient;
  /** SIGKILL: no shutdown hooks, no leases handed back. */
  kill(): Promise<void>;
}

/** Starts a dispatcher in its own process (test/support/dispatcher-process.ts) on the file's database and stream. */
async function spawnDispatcher(database: TestDatabase, nats: NatsSpace, onTestFinished: (fn: () => Promise<void>) => void): Promise<Child> {
  const child = await spawnChildService('test/support/dispatcher-process.ts', {
    cwd: PACKAGE_DIR,
    env: { ...testEnvironment(database, ENV), NATS_URL, TEST_NATS_STREAM: nats.stream, TEST_NATS_SUBJECT_PREFIX: nats.subjectPrefix },
  });
  const channel = new GrpcChannel(`127.0.0.1:${child.ports[0]}`, { defaultDeadlineMs: 15_000 });
  const kill = async () => {
    channel.close();
    await child.kill();
  };
  onTestFinished(kill);
  return { process: child.process, client: channel.client(WebhookServiceService), kill };
}

async function replacement(database: TestDatabase, nats: NatsSpace, onTestFinished: (fn: () => Promise<void>) => void): Promise<Instance> {
  const instance = await startInstance(database, { bus: await nats.connect('replacement'), subjectPrefix: nats.subjectPrefix, env: ENV });
  onTestFinished(() => instance.stop());
  return instance;
}

describe('a dispatcher that goes away mid-schedule', { timeout: 60_000 }, () => {
  test('between attempts: the next replica keeps the schedule, and events sent meanwhile are not lost', async ({ database, nats, onTestFinished }) => {
    let calls = 0;
    const receiver = await startReceiver(() => (++calls === 1 ? { status: 500 } : { status: 200 }));
    const child = await spawnDispatcher(database, nats, onTestFinished);
    const tenant = newTenant();
    const { webhook, secret } = await createWebhook(child.client, tenant, receiver.url('/resilient'));
    const publisher = await nats.connect('publisher');
    const first = newEvent('agent.created', tenant.tenantId, { n: 1 });
    await publisher.publish(first);

    await vi.waitFor(
      async () => {
        const [row] = await database.query<{ attempts: number }>('select attempts from webhook_deliveries where event_id = $1', [first.id]);
        expect(row?.attempts).toBe(1);
      },
      { timeout: 10_000, interval: 20 },
    );
    await child.kill();
    // Emitted while no dispatcher runs: JetStream keeps it for the durable consumer.
    const second = newEvent('agent.updated', tenant.tenantId, { n: 2 });
    await publisher.publish(second);

    const next = await replacement(database, nats, onTestFinished);
    const requests = await receiver.waitFor(3, { match: '/resilient', timeoutMs: 15_000 });
    const ids = requests.map((request) => verifyDelivery(request, secret).id);
    // The later event may overtake the first one's retry: "in order unless a retry intervenes".
    expect(ids.filter((id) => id === first.id)).toHaveLength(2);
    expect(ids.filter((id) => id === second.id)).toHaveLength(1);
    const [attempt1, attempt2] = requests.filter((request) => request.headers['x-service-event-id'] === first.id);
    expect(attempt2!.receivedAt - attempt1!.receivedAt).toBeGreaterThanOrEqual(1_000);
    const log = await deliveriesOf(next.client, tenant, webhook.id);
    expect(log.map((delivery) => [delivery.eventId, delivery.status, delivery.attempts])).toEqual([
      [second.id, 'delivered', 1],
      [first.id, 'delivered', 2],
    ]);
  });

  test('during an attempt: its lease expires and another replica sends it again, once', async ({ database, nats, onTestFinished }) => {
    let calls = 0;
    // The first request is never answered: the dispatcher dies while waiting for it.
    const receiver = await startReceiver(() => (++calls === 1 ? { hold: 'answer' } : { status: 200 }));
    const child = await spawnDispatcher(database, nats, onTestFinished);
    const tenant = newTenant();
    const { webhook, secret } = await createWebhook(child.client, tenant, receiver.url('/in-flight'));
    const event = newEvent('billing.purchase.completed', tenant.tenantId, { credits: 5 });
    await (await nats.connect('publisher-2')).publish(event);

    const [sent] = await receiver.waitFor(1, { match: '/in-flight' });
    await child.kill();
    const [held] = await database.query<{ attempts: number; leased: boolean }>(
      'select d.attempts, w.lease_until > now() as leased from webhook_deliveries d join webhooks w on w.id = d.webhook_id where d.event_id = $1',
      [event.id],
    );
    expect(held).toEqual({ attempts: 0, leased: true });

    const next = await replacement(database, nats, onTestFinished);
    const [, resent] = await receiver.waitFor(2, { match: '/in-flight', timeoutMs: LEASE_MS + 5_000 });
    // Not before the dead worker's lease ran out: never two attempts in flight at once.
    expect(resent!.receivedAt - sent!.receivedAt).toBeGreaterThanOrEqual(LEASE_MS - 500);
    expect(verifyDelivery(resent!, secret).id).toBe(event.id);
    expect(resent!.body).toBe(sent!.body);
    const [delivery] = await vi.waitFor(async () => {
      const log = await deliveriesOf(next.client, tenant, webhook.id);
      expect(log[0]?.status).toBe('delivered');
      return log;
    });
    // The killed attempt was never recorded; the one that got through is attempt 1.
    expect(delivery).toMatchObject({ attempts: 1, responseStatus: 200 });
    expect(delivery!.attemptLog).toHaveLength(1);
    // The marker: a later event to the same endpoint. Another send of the first would come before it.
    const marker = await next.publish(tenant.tenantId, 'agent.created');
    const requests = await receiver.waitFor((all) => all.some((request) => request.headers['x-service-event-id'] === marker.id), { match: '/in-flight' });
    expect(requests.map((request) => request.headers['x-service-event-id'])).toEqual([event.id, event.id, marker.id]);
  });

  test('a graceful stop is bounded and hands unfinished claims back for another replica at once', async ({ database, nats, onTestFinished }) => {
    let calls = 0;
    const receiver = await startReceiver(() => (++calls === 1 ? { hold: 'answer' } : { status: 200 }));
    const stopping = await startInstance(database, { bus: await nats.connect('stopping'), subjectPrefix: nats.subjectPrefix, env: { ...ENV, WEBHOOK_TIMEOUT_MS: '20000' } });
    onTestFinished(() => stopping.stop());
    const tenant = newTenant();
    const { webhook } = await createWebhook(stopping.client, tenant, receiver.url('/handover'));
    const event = newEvent('agent.created', tenant.tenantId, {});
    await (await nats.connect('publisher-3')).publish(event);
    const [sent] = await receiver.waitFor(1, { match: '/handover' });

    const started = Date.now();
    await stopping.stop();
    // Worker grace (5 s) plus closing the rest; far below the 20 s time-out it would otherwise wait.
    expect(Date.now() - started).toBeLessThan(8_000);
    const [row] = await database.query<{ attempts: number; status: string; lease_until: Date | null; lease_token: string | null }>(
      'select d.attempts, d.status, w.lease_until, w.lease_token from webhook_deliveries d join webhooks w on w.id = d.webhook_id where d.event_id = $1',
      [event.id],
    );
    expect(row).toEqual({ attempts: 0, status: 'pending', lease_until: null, lease_token: null });

    const next = await replacement(database, nats, onTestFinished);
    const [, resent] = await receiver.waitFor(2, { match: '/handover', timeoutMs: 5_000 });
    expect(resent!.receivedAt - sent!.receivedAt).toBeLessThan(LEASE_MS + 5_000);
    await vi.waitFor(async () => {
      const [delivery] = await deliveriesOf(next.client, tenant, webhook.id);
      expect(delivery).toMatchObject({ status: 'delivered', attempts: 1 });
    });
  });
});
