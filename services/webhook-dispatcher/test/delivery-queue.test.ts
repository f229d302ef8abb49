import { newId } from '@agent-platform/kit';
import type { Orm } from '@agent-platform/kit/db';
import { databaseFixture, type TestDatabase } from '@agent-platform/kit/testing';
import { test as base, describe, expect } from 'vitest';
import { migrations, openDatabase } from '../src/database.js';
import type { ClaimedRun } from '../src/deliveries/claimed.js';
import { DeliveryQueue } from '../src/deliveries/delivery-queue.js';
import type { AttemptResult } from '../src/deliveries/http-sender.js';
import { logger } from './support/harness.js';

// The queue's SQL on its own, against the real schema: what a claim takes and what a batch of
// completions changes, row by row. A claim looks at every endpoint, so each test has a database
// of its own.
const test = base
  .extend('database', databaseFixture({ name: 'webhooks', migrations, migrate: async (url) => (await openDatabase(url, logger)).close() }))
  .extend('queue', async ({ database }, { onCleanup }) => {
    const orm: Orm = await openDatabase(database.url, logger);
    onCleanup(() => orm.close());
    return new DeliveryQueue(orm.em, { workerId: 'queue-test' });
  });

const LEASE_MS = 60_000;
const DELIVERED: AttemptResult = { outcome: 'delivered', responseStatus: 204, responseTimeMs: 3, error: null };
const FAILED: AttemptResult = { outcome: 'failed', responseStatus: 500, responseTimeMs: 3, error: 'HTTP 500' };

interface Row {
  event_id: string;
  status: string;
  attempts: number;
}

describe('DeliveryQueue', () => {
  test('a claim takes each endpoint with a run of its oldest due deliveries, in order', async ({ database, queue }) => {
    const tenantId = newId('tenant');
    const [first, second] = [await endpoint(database, tenantId), await endpoint(database, tenantId)];
    const events = await queueEvents(queue, tenantId, 5);
    const runs = await queue.claim(10, 3, LEASE_MS);
    expect(runs.map((run) => run.webhookId).sort()).toEqual([first, second].sort());
    for (const run of runs) expect(run.deliveries.map((delivery) => delivery.eventId)).toEqual(events.slice(0, 3));
    // Leased endpoints are not claimed again until handed back.
    expect(await queue.claim(10, 3, LEASE_MS)).toEqual([]);
  });

  test('the backlog counts the deliveries due to active endpoints, held or not, and how long the oldest has waited', async ({ database, queue }) => {
    expect(await queue.backlog()).toEqual({ due: 0, oldestSeconds: 0 });
    const tenantId = newId('tenant');
    const active = await endpoint(database, tenantId);
    await endpoint(database, tenantId, ['*'], 'failed');
    await queueEvents(queue, tenantId, 3);
    await database.query(`update webhook_deliveries set next_attempt_at = now() - interval '90 seconds' where webhook_id = $1`, [active]);
    const due = await queue.backlog();
    expect(due.due).toBe(3);
    expect(due.oldestSeconds).toBeGreaterThanOrEqual(90);
    // Claimed is still due until recorded: the depth to scale on counts it.
    await queue.claim(10, 3, LEASE_MS);
    expect((await queue.backlog()).due).toBe(3);
    // Not yet due: a retry scheduled for later.
    await database.query(`update webhook_deliveries set next_attempt_at = now() + interval '1 hour'`);
    expect(await queue.backlog()).toEqual({ due: 0, oldestSeconds: 0 });
  });

  test('one batch of completions changes exactly the rows whose lease it still holds', async ({ database, queue }) => {
    const tenantId = newId('tenant');
    const [going, lost, failing] = [await endpoint(database, tenantId), await endpoint(database, tenantId), await endpoint(database, tenantId)];
    const events = await queueEvents(queue, tenantId, 3);
    const runs = new Map((await queue.claim(10, 3, LEASE_MS)).map((run) => [run.webhookId, run]));
    const run = (id: string): ClaimedRun => runs.get(id)!;
    // Another worker took this one over meanwhile: its completion must change nothing.
    await database.query(`update webhooks set lease_token = 'someone-else' where id = $1`, [lost]);

    // Submitted together: the Batcher writes the first at once and the others as one statement.
    const [goingFirst, goingSecond, lostFirst, failingFirst] = await Promise.all([
      queue.complete(run(going), run(going).deliveries[0]!, new Date(), DELIVERED, { final: true }, false),
      queue.complete(run(going), run(going).deliveries[1]!, new Date(), DELIVERED, { final: true }, false),
      queue.complete(run(lost), run(lost).deliveries[0]!, new Date(), DELIVERED, { final: true }, false),
      // The last attempt failed: the delivery fails, the endpoint with it, and the run ends here.
      queue.complete(run(failing), run(failing).deliveries[0]!, new Date(), FAILED, { final: true }, true),
    ]);
    expect(goingFirst).toEqual({ recorded: true, endpointUnchanged: true });
    expect(goingSecond).toEqual({ recorded: true, endpointUnchanged: true });
    expect(lostFirst).toEqual({ recorded: false, endpointUnchanged: false });
    expect(failingFirst).toMatchObject({ recorded: true });

    expect(await deliveries(database, going)).toEqual([
      { event_id: events[0], status: 'delivered', attempts: 1 },
      { event_id: events[1], status: 'delivered', attempts: 1 },
      { event_id: events[2], status: 'pending', attempts: 0 },
    ]);
    expect((await deliveries(database, lost)).map((row) => [row.status, row.attempts])).toEqual([
      ['pending', 0],
      ['pending', 0],
      ['pending', 0],
    ]);
    expect(await deliveries(database, failing)).toEqual([
      { event_id: events[0], status: 'failed', attempts: 1 },
      { event_id: events[1], status: 'pending', attempts: 0 },
      { event_id: events[2], status: 'pending', attempts: 0 },
    ]);

    const attempts = await database.query<{ webhook_id: string; event_id: string; outcome: string; worker_id: string }>(
      `select d.webhook_id, d.event_id, a.outcome, a.worker_id from webhook_delivery_attempts a join webhook_deliveries d on d.id = a.delivery_id
       where d.tenant_id = $1 order by d.webhook_id, d.event_created_at`,
      [tenantId],
    );
    expect(attempts).toEqual(
      [
        { webhook_id: going, event_id: events[0], outcome: 'delivered', worker_id: 'queue-test' },
        { webhook_id: going, event_id: events[1], outcome: 'delivered', worker_id: 'queue-test' },
        { webhook_id: failing, event_id: events[0], outcome: 'failed', worker_id: 'queue-test' },
      ].sort((a, b) => a.webhook_id.localeCompare(b.webhook_id)),
    );
    const endpoints = await database.query<{ id: string; status: string; leased: boolean; lease_token: string | null }>(
      `select id, status, lease_until is not null as leased, lease_token from webhooks where tenant_id = $1`,
      [tenantId],
    );
    expect(Object.fromEntries(endpoints.map((row) => [row.id, [row.status, row.leased, row.lease_token]]))).toEqual({
      [going]: ['active', true, run(going).leaseToken],
      [lost]: ['active', true, 'someone-else'],
      [failing]: ['failed', false, null],
    });
  });

  test('ending a run hands back the endpoint and its unsent deliveries, due again at once', async ({ database, queue }) => {
    const tenantId = newId('tenant');
    const webhookId = await endpoint(database, tenantId);
    const events = await queueEvents(queue, tenantId, 4);
    const [run] = await queue.claim(10, 4, LEASE_MS);
    expect(await queue.complete(run!, run!.deliveries[0]!, new Date(), FAILED, { retryInSeconds: 60 }, true)).toMatchObject({ recorded: true });
    expect(await deliveries(database, webhookId)).toEqual([
      { event_id: events[0], status: 'pending', attempts: 1 },
      ...events.slice(1).map((id) => ({ event_id: id, status: 'pending', attempts: 0 })),
    ]);
    // The failed one waits for its retry; the rest are claimed afresh, oldest first.
    const [next] = await queue.claim(10, 4, LEASE_MS);
    expect(next!.deliveries.map((delivery) => delivery.eventId)).toEqual(events.slice(1));
  });

  test('an attempt is recorded once, though its record arrives twice', async ({ database, queue }) => {
    const tenantId = newId('tenant');
    const webhookId = await endpoint(database, tenantId);
    await queueEvents(queue, tenantId, 2);
    const [run] = await queue.claim(10, 2, LEASE_MS);
    const [first] = run!.deliveries;
    expect(await queue.complete(run!, first!, new Date(), FAILED, { retryInSeconds: 0 }, false)).toMatchObject({ recorded: true });
    // The same record again (a run that outlived its lease overlapping the next holder's, say): refused, not an error.
    expect(await queue.complete(run!, first!, new Date(), FAILED, { retryInSeconds: 0 }, false)).toEqual({ recorded: false, endpointUnchanged: false });
    const attempts = await database.query(`select number from webhook_delivery_attempts where delivery_id = $1`, [first!.id]);
    expect(attempts).toEqual([{ number: 1 }]);
    expect((await deliveries(database, webhookId))[0]).toMatchObject({ status: 'pending', attempts: 1 });
  });

  test('a hand-back frees the endpoint only while the lease is still the one it was given', async ({ database, queue }) => {
    const tenantId = newId('tenant');
    const webhookId = await endpoint(database, tenantId);
    const events = await queueEvents(queue, tenantId, 2);
    const [expired] = await queue.claim(10, 2, LEASE_MS);
    // Its lease ran out and another worker holds the endpoint now.
    await database.query(`update webhooks set lease_token = 'someone-else' where id = $1`, [webhookId]);
    await queue.release(expired!);
    expect(await queue.claim(10, 2, LEASE_MS)).toEqual([]);

    await database.query(`update webhooks set lease_token = $2 where id = $1`, [webhookId, expired!.leaseToken]);
    await queue.release(expired!);
    const [again] = await queue.claim(10, 2, LEASE_MS);
    expect(again!.deliveries.map((delivery) => delivery.eventId)).toEqual(events);
    expect(again!.leaseToken).not.toBe(expired!.leaseToken);
  });

  test('a run of events is fanned out by subscription in one go, ids enough for any number of endpoints, and only once', async ({ database, queue }) => {
    const [busy, quiet] = [newId('tenant'), newId('tenant')];
    // More endpoints than a first pass makes ids for: the statement runs again with enough.
    const everything = await Promise.all(Array.from({ length: 20 }, () => endpoint(database, busy)));
    const agentsOnly = await endpoint(database, quiet, ['agent.created']);
    const failed = await endpoint(database, quiet, ['*'], 'failed');
    const at = (n: number) => new Date(Date.now() - 60_000 + n).toISOString();
    const run = [
      { id: newId('event'), tenantId: busy, type: 'agent.created', createdAt: at(0), body: '{"n":0}', trace: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' } },
      { id: newId('event'), tenantId: quiet, type: 'agent.created', createdAt: at(1), body: '{"n":1}', trace: null },
      { id: newId('event'), tenantId: quiet, type: 'agent.deleted', createdAt: at(2), body: '{"n":2}', trace: null },
      { id: newId('event'), tenantId: busy, type: 'agent.deleted', createdAt: at(3), body: '{"n":3}', trace: null },
    ];
    expect((await queue.fanOut(run, 5, 0)).sort()).toEqual([...everything, agentsOnly].sort());

    const rows = await database.query<{ webhook_id: string; event_id: string; payload: string; trace: string | null; id: string }>(
      `select id, webhook_id, event_id, payload, trace_context::text as trace from webhook_deliveries`,
    );
    const expected = [...everything.flatMap((webhookId) => [[webhookId, run[0]!], [webhookId, run[3]!]] as const), [agentsOnly, run[1]!] as const];
    expect(rows.map((row) => [row.webhook_id, row.event_id, row.payload]).sort()).toEqual(expected.map(([webhookId, event]) => [webhookId, event.id, event.body]).sort());
    expect(new Set(rows.map((row) => row.id)).size).toBe(rows.length);
    expect(rows.filter((row) => row.event_id === run[0]!.id).map((row) => JSON.parse(row.trace!) as unknown)).toEqual(everything.map(() => run[0]!.trace));
    expect(rows.some((row) => row.webhook_id === failed)).toBe(false);

    // Redelivered (a lost acknowledgement): nothing more.
    expect(await queue.fanOut(run, 5, 0)).toEqual([]);
    expect(await database.query(`select 1 from webhook_deliveries`)).toHaveLength(rows.length);
  });

  test('a completion tells when the endpoint changed since the claim', async ({ database, queue }) => {
    const tenantId = newId('tenant');
    const webhookId = await endpoint(database, tenantId);
    await queueEvents(queue, tenantId, 2);
    const [run] = await queue.claim(10, 2, LEASE_MS);
    await database.query(`update webhooks set url = 'https://elsewhere.example.com/hook' where id = $1`, [webhookId]);
    expect(await queue.complete(run!, run!.deliveries[0]!, new Date(), DELIVERED, { final: true }, false)).toEqual({ recorded: true, endpointUnchanged: false });
  });
});

async function endpoint(database: TestDatabase, tenantId: string, events = ['*'], status = 'active'): Promise<string> {
  const id = newId('webhook');
  await database.query(
    `insert into webhooks (id, tenant_id, url, events, status, secret_sealed, created_at, updated_at) values ($1, $2, $3, $4, $5, 'sealed', now(), now())`,
    [id, tenantId, `https://hooks.example.com/${id}`, events, status],
  );
  return id;
}

/** `count` events of the tenant, fanned out in order, 1 ms apart; their ids. */
async function queueEvents(queue: DeliveryQueue, tenantId: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  const start = Date.now() - 60_000;
  for (let n = 0; n < count; n += 1) {
    const id = newId('event');
    ids.push(id);
    await queue.fanOut([{ id, tenantId, type: 'agent.created', createdAt: new Date(start + n).toISOString(), body: `{"n":${n}}`, trace: null }], 5, 0);
  }
  return ids;
}

async function deliveries(database: TestDatabase, webhookId: string): Promise<Row[]> {
  return database.query<Row>(`select event_id, status, attempts from webhook_deliveries where webhook_id = $1 order by event_created_at`, [webhookId]);
}
