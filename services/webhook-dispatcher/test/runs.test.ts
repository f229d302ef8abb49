import type { EventEnvelope } from '@agent-platform/kit/events';
import { describe, expect } from 'vitest';
import { startReceiver, type Answer, type ReceivedRequest } from '@agent-platform/kit/testing';
import { createWebhook, databaseTest, newTenant, startInstance, waitForDeliveries, type Instance } from './support/harness.js';
import { verifyDelivery } from './support/verify.js';

// A claim takes a run of an endpoint's due deliveries, sent one after another. These tests hold
// the first request until every event is queued, so the next claim takes them all as one run,
// and check what the run must keep: order, one attempt at a time, a failure's retry before what
// follows, a changed endpoint, a graceful stop.
const test = databaseTest;
// Retries due at once: a failed delivery is the oldest due again, so it must go before the rest.
const ENV = { WEBHOOK_RETRY_SCHEDULE: '0,0,0' };

async function instance(database: Parameters<typeof startInstance>[0], onTestFinished: (fn: () => Promise<void>) => void, env = ENV): Promise<Instance> {
  const started = await startInstance(database, { env });
  onTestFinished(() => started.stop());
  return started;
}

async function publishAll(dispatcher: Instance, tenantId: string, count: number): Promise<EventEnvelope<object>[]> {
  const events: EventEnvelope<object>[] = [];
  for (let n = 0; n < count; n += 1) events.push(await dispatcher.publish(tenantId, 'agent.message.created', { n }));
  return events;
}

/**
 * One endpoint whose first request is held until `count` events are queued, so they go as one run;
 * later requests (numbered from 2) are answered by `reply`.
 */
async function oneRun(database: Parameters<typeof startInstance>[0], onTestFinished: (fn: () => Promise<void>) => void, path: string, count: number, reply: (call: number) => Answer) {
  const dispatcher = await instance(database, onTestFinished);
  let calls = 0;
  const receiver = await startReceiver(() => ((calls += 1) === 1 ? { status: 204, hold: 'answer' } : reply(calls)));
  const tenant = newTenant();
  const { webhook } = await createWebhook(dispatcher.client, tenant, receiver.url(path));
  const events = await publishAll(dispatcher, tenant.tenantId, count);
  await receiver.waitFor(1);
  receiver.release();
  return { dispatcher, receiver, tenant, webhook, ids: events.map((event) => event.id) };
}

const idsOf = (requests: ReceivedRequest[]) => requests.map((request) => String(request.headers['x-service-event-id']));

describe('runs of one endpoint', { timeout: 30_000 }, () => {
  test('several endpoints at once: each gets its events in emitted order, one at a time', async ({ database, onTestFinished }) => {
    const dispatcher = await instance(database, onTestFinished);
    const first = new Set<string>();
    // The first request to each endpoint is held, so its next claim takes everything queued behind it.
    const receiver = await startReceiver((request) => {
      const held = !first.has(request.path);
      first.add(request.path);
      return held ? { status: 204, hold: 'answer' } : { status: 204, delayMs: request.body.length % 3 };
    });
    const tenant = newTenant();
    const paths = ['/a', '/b', '/c', '/d'];
    const endpoints: { secret: string }[] = [];
    for (const path of paths) endpoints.push(await createWebhook(dispatcher.client, tenant, receiver.url(path)));
    const events = await publishAll(dispatcher, tenant.tenantId, 40);
    await receiver.waitFor((requests) => new Set(requests.map((request) => request.path)).size === paths.length);
    receiver.release();

    for (const [index, path] of paths.entries()) {
      const received = await receiver.waitFor(events.length, { match: path });
      expect(received.map((request) => verifyDelivery(request, endpoints[index]!.secret).id)).toEqual(events.map((event) => event.id));
      expect(receiver.maxConcurrency(path)).toBe(1);
    }
  });

  test('a failure ends the run: the retry goes before the events after it', async ({ database, onTestFinished }) => {
    const { receiver, ids } = await oneRun(database, onTestFinished, '/flaky', 10, (call) => ({ status: call === 5 ? 500 : 204 }));
    const received = idsOf(await receiver.waitFor(11, { match: '/flaky' }));
    // The 5th request failed; its retry is due at once and is the oldest due, so it comes next.
    expect(received).toEqual([...ids.slice(0, 5), ids[4], ...ids.slice(5)]);
  });

  test('a run stops at an endpoint edited meanwhile: the rest goes to the new URL', async ({ database, onTestFinished }) => {
    const { dispatcher, receiver, tenant, webhook, ids } = await oneRun(database, onTestFinished, '/old', 30, () => ({ status: 204, delayMs: 20 }));
    await receiver.waitFor(3, { match: '/old' });
    await dispatcher.client.updateWebhook({ webhookId: webhook.id, url: receiver.url('/new'), setEvents: false, events: [] }, { principal: tenant.principal });

    await waitForDeliveries(dispatcher.client, tenant, webhook.id, (items) => expect(items.filter((item) => item.status === 'delivered')).toHaveLength(30));
    const [old, moved] = [idsOf(receiver.received('/old')), idsOf(receiver.received('/new'))];
    // A few sends may already be under way when the edit lands; never the rest of the run.
    expect(old.length).toBeLessThan(15);
    expect(moved.length).toBeGreaterThan(0);
    expect([...old, ...moved]).toEqual(ids);
  });

  test('a graceful stop ends each run after the attempt in flight and hands the rest back at once', async ({ database, onTestFinished }) => {
    const { dispatcher, receiver, webhook } = await oneRun(database, onTestFinished, '/stopping', 12, () => ({ status: 204, delayMs: 100 }));
    await receiver.waitFor(3, { match: '/stopping' });

    const started = Date.now();
    await dispatcher.stop();
    // Far below the 5 s grace, which the run's other nine 100 ms attempts would nearly fill.
    expect(Date.now() - started).toBeLessThan(1_000);
    const sent = receiver.received('/stopping').length;
    expect(sent).toBeLessThan(6);
    const rows = await database.query<{ status: string; n: string }>(
      `select status, count(*) as n from webhook_deliveries where webhook_id = $1 group by 1 order by 1`,
      [webhook.id],
    );
    expect(rows).toEqual([
      { status: 'delivered', n: String(sent) },
      { status: 'pending', n: String(12 - sent) },
    ]);
    const [endpoint] = await database.query<{ lease_until: Date | null; lease_token: string | null }>('select lease_until, lease_token from webhooks where id = $1', [webhook.id]);
    expect(endpoint).toEqual({ lease_until: null, lease_token: null });
  });
});
