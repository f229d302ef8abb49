import { newEvent, type EventEnvelope } from '@agent-platform/kit/events';
import { describe, expect } from 'vitest';
import { startReceiver, type ReceivedRequest } from '@agent-platform/kit/testing';
import { createWebhook, databaseTest, deliveriesOf, newTenant, startInstance, type Instance } from './support/harness.js';
import { natsFixture } from './support/buses.js';
import { verifyDelivery } from './support/verify.js';

// Replicas share one database and one durable JetStream consumer, as in the distributed mode.
const test = databaseTest.extend('nats', { scope: 'file' }, natsFixture());

const ENDPOINTS = 8;
const EVENTS = 25;

describe('several dispatcher replicas', { timeout: 60_000 }, () => {
  test('share the work without ever sending a delivery twice or two at once to one endpoint', async ({ database, nats, onTestFinished }) => {
    const replicas: Instance[] = [];
    onTestFinished(async () => {
      await Promise.all(replicas.map((replica) => replica.stop()));
    });
    for (const name of ['replica-a', 'replica-b', 'replica-c']) {
      replicas.push(
        await startInstance(database, {
          bus: await nats.connect(name),
          subjectPrefix: nats.subjectPrefix,
          env: { DELIVERY_CONCURRENCY: '3', WEBHOOK_RETRY_SCHEDULE: '0,1,1,1,1' },
        }),
      );
    }
    const [a] = replicas;
    const receiver = await startReceiver(() => ({ status: 200, delayMs: 10 }));
    const tenant = newTenant();
    const endpoints = [];
    for (let i = 0; i < ENDPOINTS; i += 1) endpoints.push(await createWebhook(a!.client, tenant, receiver.url(`/w${i}`)));

    // Published by another service's relay, as they would be.
    const publisher = await nats.connect('publisher');
    const events: EventEnvelope<object>[] = [];
    for (let i = 0; i < EVENTS; i += 1) {
      const event = newEvent('agent.message.created', tenant.tenantId, { i });
      events.push(event);
      await publisher.publish(event);
    }

    await receiver.waitFor(ENDPOINTS * EVENTS, { timeoutMs: 30_000 });
    // The marker: one more event once all have arrived. An endpoint gets its due deliveries oldest
    // first, so a second send of any earlier event would come before the marker does.
    const marker = newEvent('agent.message.created', tenant.tenantId, { marker: true });
    await publisher.publish(marker);
    const isMarker = (request: ReceivedRequest) => request.headers['x-service-event-id'] === marker.id;
    await receiver.waitFor(ENDPOINTS, { match: isMarker, timeoutMs: 15_000 });
    const requests = receiver.received((request) => !isMarker(request));
    expect(requests).toHaveLength(ENDPOINTS * EVENTS);
    const pairs = new Set(requests.map((request) => `${request.path} ${String(request.headers['x-service-event-id'])}`));
    expect(pairs.size).toBe(ENDPOINTS * EVENTS);

    for (const [i, { webhook, secret }] of endpoints.entries()) {
      const received = receiver.received(`/w${i}`).filter((request) => !isMarker(request));
      expect(received.map((request) => verifyDelivery(request, secret).id).sort()).toEqual(events.map((event) => event.id).sort());
      expect(receiver.maxConcurrency(`/w${i}`)).toBe(1);
      // The marker's own record may still trail its send; every earlier one was written before it was claimed.
      const log = (await deliveriesOf(a!.client, tenant, webhook.id)).filter((delivery) => delivery.eventId !== marker.id);
      expect(log).toHaveLength(EVENTS);
      expect(log.every((delivery) => delivery.status === 'delivered' && delivery.attempts === 1)).toBe(true);
    }
    const workers = await database.query<{ worker_id: string; n: string }>(
      `select a.worker_id, count(*) as n from webhook_delivery_attempts a join webhook_deliveries d on d.id = a.delivery_id
       where d.tenant_id = $1 and d.event_id <> $2 group by a.worker_id`,
      [tenant.tenantId, marker.id],
    );
    expect(workers.reduce((sum, row) => sum + Number(row.n), 0)).toBe(ENDPOINTS * EVENTS);
    expect(workers.length).toBeGreaterThanOrEqual(2);
  });
});
