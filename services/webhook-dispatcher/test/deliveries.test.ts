import { isId } from '@agent-platform/kit';
import { newEvent } from '@agent-platform/kit/events';
import { describe, expect } from 'vitest';
import { PrincipalKind } from '@agent-platform/kit/grpc';
import { startReceiver } from '@agent-platform/kit/testing';
import { createWebhook, deliveriesOf, dispatcherTest, expectError, newTenant, principalOf, waitForDeliveries } from './support/harness.js';
import { CapturingBus } from './support/buses.js';
import { verifiesWith, verifyDelivery } from './support/verify.js';

const test = dispatcherTest();

describe('fan-out', () => {
  test('delivers each event to the endpoints subscribed to its type or to *, signed for both libraries', async ({ dispatcher }) => {
    const receiver = await startReceiver();
    const tenant = newTenant();
    const agents = await createWebhook(dispatcher.client, tenant, receiver.url('/agents'), ['agent.created', 'agent.updated']);
    const all = await createWebhook(dispatcher.client, tenant, receiver.url('/all'), ['*']);
    const billing = await createWebhook(dispatcher.client, tenant, receiver.url('/billing'), ['billing.credits.low'], 'a-supplied-secret-for-billing');

    // Quotes, backslashes and placeholders-lookalikes must survive storage byte for byte.
    const created = await dispatcher.publish(tenant.tenantId, 'agent.created', { agent_id: 'agt_1', note: `it's \\ ? ?? $1 ☃ "q" \n` });
    const low = await dispatcher.publish(tenant.tenantId, 'billing.credits.low', { balance: 99, threshold: 100 });
    const done = await dispatcher.publish(tenant.tenantId, 'workflow.execution.completed', { execution_id: 'exe_1' });

    const toAll = await receiver.waitFor(3, { match: '/all' });
    const toAgents = await receiver.waitFor(1, { match: '/agents' });
    const toBilling = await receiver.waitFor(1, { match: '/billing' });
    expect(toAll.map((request) => verifyDelivery(request, all.secret).id)).toEqual([created.id, low.id, done.id]);
    expect(toAgents.map((request) => verifyDelivery(request, agents.secret))).toEqual([created]);
    expect(toBilling.map((request) => verifyDelivery(request, billing.secret))).toEqual([low]);
    // The body is the envelope exactly as published: the same text, key order included.
    expect(toAgents[0]!.body).toBe(JSON.stringify(created));
    expect(verifiesWith(toAgents[0]!, all.secret)).toBe(false);

    const log = await waitForDeliveries(dispatcher.client, tenant, agents.webhook.id, (items) => {
      expect(items.map((d) => d.status)).toEqual(['delivered']);
      return items;
    });
    expect(log[0]).toMatchObject({ eventId: created.id, eventType: 'agent.created', attempts: 1, responseStatus: 200, error: undefined });
    expect(log[0]!.deliveredAt).toBeInstanceOf(Date);
    expect(log[0]!.attemptLog).toMatchObject([{ number: 1, responseStatus: 200, outcome: 'delivered' }]);
    expect(toAgents[0]!.headers['x-service-delivery-id']).toBe(log[0]!.id);
  });

  test('a run published together is queued in order, each event in its own trace; malformed and internal ones are left out', async ({ dispatcher }) => {
    const receiver = await startReceiver();
    const tenant = newTenant();
    const { webhook } = await createWebhook(dispatcher.client, tenant, receiver.url('/run'));
    const first = newEvent('agent.created', tenant.tenantId, { n: 1 });
    const internal = newEvent('agent.secret.internal', tenant.tenantId, {});
    const malformed = { ...newEvent('agent.updated', tenant.tenantId, {}), created_at: 'yesterday' };
    const second = newEvent('billing.credits.low', tenant.tenantId, { balance: 2 });
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    // The in-process bus hands a run to the dispatcher's batch handler: one fan-out statement.
    await dispatcher.bus.publishAll(
      [first, internal, malformed, second].map((envelope, i) => ({ envelope, json: JSON.stringify(envelope), trace: i === 0 ? { traceparent } : null })),
    );
    const arrived = await receiver.waitFor(2, { match: '/run' });
    expect(arrived.map((request) => request.headers['x-service-event-id'])).toEqual([first.id, second.id]);
    const rows = await dispatcher.database.query<{ event_id: string; trace: string | null }>(
      'select event_id, trace_context::text as trace from webhook_deliveries where webhook_id = $1 order by event_created_at, event_id',
      [webhook.id],
    );
    expect(rows.map((row) => [row.event_id, row.trace && (JSON.parse(row.trace) as unknown)])).toEqual([
      [first.id, { traceparent }],
      [second.id, null],
    ]);
  });

  test('never crosses tenants', async ({ dispatcher }) => {
    const receiver = await startReceiver();
    const mine = newTenant();
    const theirs = newTenant();
    await createWebhook(dispatcher.client, mine, receiver.url('/mine'));
    await createWebhook(dispatcher.client, theirs, receiver.url('/theirs'));
    const event = await dispatcher.publish(mine.tenantId, 'agent.updated');
    await receiver.waitFor(1, { match: '/mine' });
    // The marker: their own later event. Had ours reached their endpoint, it would have come first.
    const marker = await dispatcher.publish(theirs.tenantId, 'agent.updated');
    const [theirsFirst] = await receiver.waitFor(1, { match: '/theirs' });
    expect(JSON.parse(theirsFirst!.body)).toMatchObject({ id: marker.id, tenant_id: theirs.tenantId });
    expect(JSON.parse(receiver.received('/mine')[0]!.body)).toMatchObject({ id: event.id, tenant_id: mine.tenantId });
  });

  test('a redelivered event adds nothing; unknown types and failed endpoints get nothing', async ({ dispatcher }) => {
    const receiver = await startReceiver();
    const tenant = newTenant();
    const { webhook } = await createWebhook(dispatcher.client, tenant, receiver.url('/once'));
    const bus = new CapturingBus();
    const replica = await dispatcher.startInstance({ bus });
    const event = newEvent('agent.created', tenant.tenantId, { n: 1 });
    const json = JSON.stringify(event);
    // The transport hands the same event over three times (lost acks, two replicas): one delivery.
    await Promise.all([bus.deliver(event, json, 1), bus.deliver(event, json, 2)]);
    await receiver.waitFor(1, { match: '/once' });
    await bus.deliver(event, json, 3);
    const rows = await dispatcher.database.query<{ n: string }>('select count(*) as n from webhook_deliveries where event_id = $1', [event.id]);
    expect(rows[0]!.n).toBe('1');

    await bus.publish(newEvent('agent.secret.internal', tenant.tenantId, {}));
    await dispatcher.database.query(`update webhooks set status = 'failed' where id = $1`, [webhook.id]);
    await bus.publish(newEvent('agent.updated', tenant.tenantId, {}));
    await replica.stop();
    // Fan-out is done when publish resolves: the one delivery there is, once recorded delivered, is
    // all any worker could ever send.
    const [only, ...others] = await waitForDeliveries(dispatcher.client, tenant, webhook.id, (items) => {
      expect(items[0]?.status).toBe('delivered');
      return items;
    });
    expect(others).toEqual([]);
    expect(only).toMatchObject({ eventId: event.id, attempts: 1 });
    expect(receiver.received('/once')).toHaveLength(1);
  });

  test('reaches every subscribed endpoint of a tenant with many, once each', async ({ dispatcher }) => {
    const receiver = await startReceiver();
    const tenant = newTenant();
    // More endpoints than one fan-out statement makes ids for.
    const count = 20;
    for (let i = 0; i < count; i += 1) await createWebhook(dispatcher.client, tenant, receiver.url(`/many/${i}`));
    const event = await dispatcher.publish(tenant.tenantId, 'agent.created');
    const requests = await receiver.waitFor(count);
    expect(new Set(requests.map((request) => request.path)).size).toBe(count);
    expect(requests.every((request) => request.headers['x-service-event-id'] === event.id)).toBe(true);
    const rows = await dispatcher.database.query<{ n: string; ids: string }>(
      'select count(*) as n, count(distinct id) as ids from webhook_deliveries where event_id = $1',
      [event.id],
    );
    expect(rows[0]).toEqual({ n: String(count), ids: String(count) });
  });

  test('one tenant’s events reach an endpoint in the order they were emitted', async ({ dispatcher }) => {
    const receiver = await startReceiver(() => ({ status: 204, delayMs: 5 }));
    const tenant = newTenant();
    await createWebhook(dispatcher.client, tenant, receiver.url('/ordered'));
    const events = [];
    for (let i = 0; i < 15; i += 1) events.push(await dispatcher.publish(tenant.tenantId, 'agent.message.created', { i }));
    const received = await receiver.waitFor(15, { match: '/ordered' });
    expect(received.map((request) => (JSON.parse(request.body) as { id: string }).id)).toEqual(events.map((event) => event.id));
    expect(receiver.maxConcurrency('/ordered')).toBe(1);
  });
});

describe('ListDeliveries', () => {
  test('pages newest first with an opaque cursor and a total', async ({ dispatcher }) => {
    const receiver = await startReceiver();
    const tenant = newTenant();
    const { webhook } = await createWebhook(dispatcher.client, tenant, receiver.url('/paged'));
    const events = [];
    for (let i = 0; i < 5; i += 1) events.push(await dispatcher.publish(tenant.tenantId, 'agent.created', { i }));
    await receiver.waitFor(5, { match: '/paged' });
    const as = { principal: tenant.principal };
    const first = await dispatcher.client.listDeliveries({ webhookId: webhook.id, page: { limit: 2 } }, as);
    expect(first.total).toBe(5);
    expect(first.items.map((d) => d.eventId)).toEqual([events[4]!.id, events[3]!.id]);
    expect(first.nextCursor).toBeDefined();
    const second = await dispatcher.client.listDeliveries({ webhookId: webhook.id, page: { limit: 2, cursor: first.nextCursor } }, as);
    expect(second.items.map((d) => d.eventId)).toEqual([events[2]!.id, events[1]!.id]);
    const last = await dispatcher.client.listDeliveries({ webhookId: webhook.id, page: { limit: 2, cursor: second.nextCursor } }, as);
    expect(last.items.map((d) => d.eventId)).toEqual([events[0]!.id]);
    expect(last.nextCursor).toBeUndefined();
    const defaults = await dispatcher.client.listDeliveries({ webhookId: webhook.id, page: { limit: 0 } }, as);
    expect(defaults.items).toHaveLength(5);
    for (const delivery of defaults.items) expect(isId('delivery', delivery.id)).toBe(true);
  });
});

describe('GetDelivery', () => {
  test('shows every attempt oldest first: a failure, then the replay that landed', async ({ dispatcher }) => {
    let healthy = false;
    const receiver = await startReceiver(() => (healthy ? { status: 204 } : { status: 500, body: 'boom' }));
    const tenant = newTenant();
    const as = { principal: tenant.principal };
    const { webhook } = await createWebhook(dispatcher.client, tenant, receiver.url('/log'));
    const sent = await dispatcher.client.testWebhook({ webhookId: webhook.id, eventType: 'agent.updated' }, as);
    healthy = true;
    await dispatcher.client.retryDelivery({ webhookId: webhook.id, deliveryId: sent.deliveryId }, as);
    await waitForDeliveries(dispatcher.client, tenant, webhook.id, ([latest]) => expect(latest?.status).toBe('delivered'));

    const { delivery } = await dispatcher.client.getDelivery({ webhookId: webhook.id, deliveryId: sent.deliveryId }, as);
    expect(delivery).toMatchObject({ id: sent.deliveryId, webhookId: webhook.id, eventType: 'agent.updated', status: 'delivered', attempts: 2, responseStatus: 204, error: 'HTTP 500' });
    const log = delivery!.attemptLog;
    expect(log).toEqual([
      { number: 1, startedAt: expect.any(Date), responseStatus: 500, responseTimeMs: expect.any(Number), outcome: 'failed', error: 'HTTP 500' },
      { number: 2, startedAt: expect.any(Date), responseStatus: 204, responseTimeMs: expect.any(Number), outcome: 'delivered', error: undefined },
    ]);
    expect(log[0]!.startedAt!.getTime()).toBeLessThanOrEqual(log[1]!.startedAt!.getTime());
    for (const attempt of log) expect(attempt.responseTimeMs).toBeGreaterThanOrEqual(0);
  });

  test("another tenant's, another webhook's or an unknown delivery is not_found; reading needs webhooks:read", async ({ dispatcher }) => {
    const receiver = await startReceiver();
    const tenant = newTenant();
    const { webhook } = await createWebhook(dispatcher.client, tenant, receiver.url('/mine'));
    const { webhook: sibling } = await createWebhook(dispatcher.client, tenant, receiver.url('/sibling'));
    const { deliveryId } = await dispatcher.client.testWebhook({ webhookId: webhook.id, eventType: 'agent.created' }, { principal: tenant.principal });

    await expectError(dispatcher.client.getDelivery({ webhookId: webhook.id, deliveryId }, { principal: newTenant().principal }), 'not_found');
    await expectError(dispatcher.client.getDelivery({ webhookId: sibling.id, deliveryId }, { principal: tenant.principal }), 'not_found');
    await expectError(dispatcher.client.getDelivery({ webhookId: webhook.id, deliveryId: 'dlv_01JD0000000000000000000000' }, { principal: tenant.principal }), 'not_found');

    const viewer = { principal: principalOf(tenant.tenantId, 'viewer') };
    expect((await dispatcher.client.getDelivery({ webhookId: webhook.id, deliveryId }, viewer)).delivery?.attemptLog).toHaveLength(1);
    const writeKey = { principal: principalOf(tenant.tenantId, 'owner', PrincipalKind.KIND_API_KEY, ['webhooks:write']) };
    await expectError(dispatcher.client.getDelivery({ webhookId: webhook.id, deliveryId }, writeKey), 'forbidden');
  });
});

describe('TestWebhook', () => {
  test('sends one signed synthetic event now and records it', async ({ dispatcher }) => {
    const receiver = await startReceiver();
    const tenant = newTenant();
    const { webhook, secret } = await createWebhook(dispatcher.client, tenant, receiver.url('/test'), ['agent.created']);
    const outcome = await dispatcher.client.testWebhook({ webhookId: webhook.id, eventType: 'workflow.execution.failed' }, { principal: tenant.principal });
    expect(outcome).toMatchObject({ success: true, responseStatus: 200, error: undefined });
    expect(outcome.responseTimeMs).toBeGreaterThanOrEqual(0);
    const [request] = receiver.received('/test');
    const event = verifyDelivery(request!, secret);
    expect(event).toMatchObject({ type: 'workflow.execution.failed', tenant_id: tenant.tenantId, data: { test: true }, api_version: '2026-11-01' });
    expect(isId('event', event.id)).toBe(true);
    const [delivery] = await deliveriesOf(dispatcher.client, tenant, webhook.id);
    expect(delivery).toMatchObject({ id: outcome.deliveryId, eventId: event.id, status: 'delivered', attempts: 1, responseStatus: 200 });
  });

  test('reports a failure without retrying it', async ({ dispatcher }) => {
    const receiver = await startReceiver(() => ({ status: 503 }));
    const tenant = newTenant();
    const { webhook } = await createWebhook(dispatcher.client, tenant, receiver.url('/down'));
    const outcome = await dispatcher.client.testWebhook({ webhookId: webhook.id, eventType: 'agent.created' }, { principal: tenant.principal });
    expect(outcome).toMatchObject({ success: false, responseStatus: 503, error: 'HTTP 503' });
    // The marker: a later event to the same endpoint. A send queued for the test event would be
    // older, so it would have gone first.
    receiver.answer({ status: 204 });
    const marker = await dispatcher.publish(tenant.tenantId, 'agent.created');
    const [tested, markerRequest] = await receiver.waitFor(2, { match: '/down' });
    expect(tested!.headers['x-service-event-id']).not.toBe(marker.id);
    expect(markerRequest!.headers['x-service-event-id']).toBe(marker.id);
    const delivery = (await deliveriesOf(dispatcher.client, tenant, webhook.id)).find((item) => item.id === outcome.deliveryId);
    expect(delivery).toMatchObject({ status: 'failed', attempts: 1, error: 'HTTP 503', nextAttemptAt: undefined });
    const status = await dispatcher.client.getWebhook({ webhookId: webhook.id }, { principal: tenant.principal });
    expect(status.webhook?.status).toBe('active');
    const refused = dispatcher.client.testWebhook({ webhookId: webhook.id, eventType: 'agent.message' }, { principal: tenant.principal });
    await expect(refused).rejects.toMatchObject({ code: 'validation_error', details: [{ field: 'event_type', message: expect.stringContaining('not an event type') }] });
  });
});

describe('RetryDelivery', () => {
  test('replays a delivered event with the attempt count continuing', async ({ dispatcher }) => {
    const receiver = await startReceiver();
    const tenant = newTenant();
    const { webhook, secret } = await createWebhook(dispatcher.client, tenant, receiver.url('/replay'));
    const event = await dispatcher.publish(tenant.tenantId, 'memory.consolidated', { agent_id: 'agt_1' });
    await receiver.waitFor(1, { match: '/replay' });
    const [delivery] = await waitForDeliveries(dispatcher.client, tenant, webhook.id, (items) => {
      expect(items[0]?.status).toBe('delivered');
      return items;
    });
    const replay = await dispatcher.client.retryDelivery({ webhookId: webhook.id, deliveryId: delivery!.id }, { principal: tenant.principal });
    expect(replay.delivery).toMatchObject({ id: delivery!.id, attempts: 1 });
    const [, second] = await receiver.waitFor(2, { match: '/replay' });
    expect(verifyDelivery(second!, secret).id).toBe(event.id);
    expect(second!.body).toBe(receiver.received('/replay')[0]!.body);
    await waitForDeliveries(dispatcher.client, tenant, webhook.id, ([latest]) => {
      expect(latest).toMatchObject({ status: 'delivered', attempts: 2 });
      expect(latest!.attemptLog.map((a) => [a.number, a.outcome])).toEqual([
        [1, 'delivered'],
        [2, 'delivered'],
      ]);
    });
    const other = newTenant();
    await expect(dispatcher.client.retryDelivery({ webhookId: webhook.id, deliveryId: 'dlv_01JD0000000000000000000000' }, { principal: tenant.principal })).rejects.toMatchObject({
      code: 'not_found',
    });
    await expect(dispatcher.client.retryDelivery({ webhookId: webhook.id, deliveryId: delivery!.id }, { principal: other.principal })).rejects.toMatchObject({
      code: 'not_found',
    });
  });
});

describe('RotateSecret', () => {
  test('signs every later attempt with the new secret only', async ({ dispatcher }) => {
    const receiver = await startReceiver();
    const tenant = newTenant();
    const { webhook, secret: old } = await createWebhook(dispatcher.client, tenant, receiver.url('/rotate'));
    await dispatcher.publish(tenant.tenantId, 'agent.created');
    const [before] = await receiver.waitFor(1, { match: '/rotate' });
    const { signingSecret } = await dispatcher.client.rotateSecret({ webhookId: webhook.id }, { principal: tenant.principal });
    await dispatcher.publish(tenant.tenantId, 'agent.updated');
    const [, after] = await receiver.waitFor(2, { match: '/rotate' });
    expect(verifiesWith(before!, old)).toBe(true);
    expect(verifiesWith(after!, old)).toBe(false);
    expect(verifyDelivery(after!, signingSecret).type).toBe('agent.updated');
  });
});
