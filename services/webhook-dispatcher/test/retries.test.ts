import { describe, expect } from 'vitest';
import { startReceiver } from '@agent-platform/kit/testing';
import { afterOneRetryDelay, createWebhook, deliveriesOf, dispatcherTest, newTenant, waitForDeliveries, waitForWebhookStatus } from './support/harness.js';
import { verifyDelivery } from './support/verify.js';

// The spec's 0, 60, 300, 1800, 7200 s compressed to seconds: 5 attempts, 1 s apart.
const test = dispatcherTest({ env: { WEBHOOK_RETRY_SCHEDULE: '0,1,1,1,1' } });
// ms: the worker polls every 250 ms; the rest is slack for a loaded machine.
const LATE_BY_AT_MOST = 900;

function gaps(times: number[]): number[] {
  return times.slice(1).map((time, index) => time - times[index]!);
}

describe('retry schedule', { timeout: 20_000 }, () => {
  test('retries a failing endpoint on schedule until it answers 2xx', async ({ dispatcher }) => {
    let calls = 0;
    const receiver = await startReceiver(() => (++calls < 3 ? { status: 500, body: 'boom' } : { status: 201 }));
    const tenant = newTenant();
    const { webhook, secret } = await createWebhook(dispatcher.client, tenant, receiver.url('/flaky'));
    const emittedAt = Date.now();
    const event = await dispatcher.publish(tenant.tenantId, 'agent.message.completed', { tokens_used: 3 });
    const requests = await receiver.waitFor(3, { match: '/flaky' });
    expect(requests[0]!.receivedAt - emittedAt).toBeLessThan(LATE_BY_AT_MOST);
    for (const gap of gaps(requests.map((request) => request.receivedAt))) {
      expect(gap).toBeGreaterThanOrEqual(1_000);
      expect(gap).toBeLessThan(1_000 + LATE_BY_AT_MOST);
    }
    // Each attempt is signed afresh over the same bytes, and all carry the event id.
    for (const request of requests) expect(verifyDelivery(request, secret).id).toBe(event.id);
    expect(new Set(requests.map((request) => request.body)).size).toBe(1);

    const [delivery] = await waitForDeliveries(dispatcher.client, tenant, webhook.id, (items) => {
      expect(items[0]?.status).toBe('delivered');
      return items;
    });
    expect(delivery).toMatchObject({ attempts: 3, responseStatus: 201, error: 'HTTP 500', nextAttemptAt: undefined });
    expect(delivery!.attemptLog.map(({ number, responseStatus, outcome, error }) => ({ number, responseStatus, outcome, error }))).toEqual([
      { number: 1, responseStatus: 500, outcome: 'failed', error: 'HTTP 500' },
      { number: 2, responseStatus: 500, outcome: 'failed', error: 'HTTP 500' },
      { number: 3, responseStatus: 201, outcome: 'delivered', error: undefined },
    ]);
    expect((await dispatcher.client.getWebhook({ webhookId: webhook.id }, { principal: tenant.principal })).webhook?.status).toBe('active');
  });

  test('shows the next attempt while one is scheduled', async ({ dispatcher }) => {
    const receiver = await startReceiver(() => ({ status: 502 }));
    const tenant = newTenant();
    const { webhook } = await createWebhook(dispatcher.client, tenant, receiver.url('/pending'));
    await dispatcher.publish(tenant.tenantId, 'agent.created');
    await receiver.waitFor(1, { match: '/pending' });
    const [delivery] = await waitForDeliveries(dispatcher.client, tenant, webhook.id, (items) => {
      expect(items[0]?.attempts).toBe(1);
      return items;
    });
    expect(delivery).toMatchObject({ status: 'pending', responseStatus: 502, error: 'HTTP 502' });
    expect(delivery!.nextAttemptAt!.getTime()).toBeGreaterThan(delivery!.attemptLog[0]!.startedAt!.getTime());
    await dispatcher.client.deleteWebhook({ webhookId: webhook.id }, { principal: tenant.principal });
  });
});

describe('endpoint failure', { timeout: 30_000 }, () => {
  test('after the 5th failed attempt the delivery and the endpoint are failed until EnableWebhook', async ({ dispatcher }) => {
    let healthy = false;
    const receiver = await startReceiver(() => (healthy ? { status: 200 } : { status: 500 }));
    const tenant = newTenant();
    const as = { principal: tenant.principal };
    const { webhook, secret } = await createWebhook(dispatcher.client, tenant, receiver.url('/dying'));
    const first = await dispatcher.publish(tenant.tenantId, 'workflow.execution.started');
    const second = await dispatcher.publish(tenant.tenantId, 'workflow.execution.completed');

    await waitForWebhookStatus(dispatcher.client, tenant, webhook.id, 'failed');
    const firstRequests = receiver.received('/dying').filter((request) => request.headers['x-service-event-id'] === first.id);
    expect(firstRequests).toHaveLength(5);
    expect(gaps(firstRequests.map((request) => request.receivedAt)).every((gap) => gap >= 1_000)).toBe(true);
    const log = await deliveriesOf(dispatcher.client, tenant, webhook.id);
    const byEvent = new Map(log.map((delivery) => [delivery.eventId, delivery]));
    expect(byEvent.get(first.id)).toMatchObject({ status: 'failed', attempts: 5, nextAttemptAt: undefined });
    // The later event was queued before the endpoint failed: it waits, its budget unspent.
    expect(byEvent.get(second.id)).toMatchObject({ status: 'pending', attempts: 4 });

    // A failed endpoint gets nothing: no new deliveries, no more attempts.
    const seen = receiver.received('/dying').length;
    const ignored = await dispatcher.publish(tenant.tenantId, 'workflow.execution.failed');
    // The pending delivery's retry was due within a retry delay of its last attempt.
    await afterOneRetryDelay(dispatcher);
    expect(receiver.received('/dying')).toHaveLength(seen);
    expect((await deliveriesOf(dispatcher.client, tenant, webhook.id)).map((d) => d.eventId)).not.toContain(ignored.id);

    healthy = true;
    const enabled = await dispatcher.client.enableWebhook({ webhookId: webhook.id }, as);
    expect(enabled.webhook?.status).toBe('active');
    await waitForDeliveries(dispatcher.client, tenant, webhook.id, (items) => {
      expect(items.find((d) => d.eventId === second.id)).toMatchObject({ status: 'delivered', attempts: 5 });
    });

    // The exhausted delivery comes back only when replayed; one more attempt, count continuing.
    const failed = byEvent.get(first.id)!;
    const replay = await dispatcher.client.retryDelivery({ webhookId: webhook.id, deliveryId: failed.id }, as);
    expect(replay.delivery).toMatchObject({ status: 'pending', attempts: 5 });
    await waitForDeliveries(dispatcher.client, tenant, webhook.id, (items) => {
      expect(items.find((d) => d.id === failed.id)).toMatchObject({ status: 'delivered', attempts: 6, responseStatus: 200 });
    });
    const last = receiver.received('/dying').at(-1)!;
    expect(verifyDelivery(last, secret).id).toBe(first.id);
  });

  test('a failed replay fails the delivery again but not the endpoint', async ({ dispatcher }) => {
    const receiver = await startReceiver(() => ({ status: 410 }));
    const tenant = newTenant();
    const { webhook } = await createWebhook(dispatcher.client, tenant, receiver.url('/gone'));
    const sent = await dispatcher.client.testWebhook({ webhookId: webhook.id, eventType: 'agent.created' }, { principal: tenant.principal });
    await dispatcher.client.retryDelivery({ webhookId: webhook.id, deliveryId: sent.deliveryId }, { principal: tenant.principal });
    await waitForDeliveries(dispatcher.client, tenant, webhook.id, ([delivery]) => {
      expect(delivery).toMatchObject({ status: 'failed', attempts: 2, responseStatus: 410 });
    });
    // A retry of the replay would have been due one retry delay after it.
    await afterOneRetryDelay(dispatcher);
    expect(receiver.received('/gone')).toHaveLength(2);
    expect((await dispatcher.client.getWebhook({ webhookId: webhook.id }, { principal: tenant.principal })).webhook?.status).toBe('active');
  });
});
