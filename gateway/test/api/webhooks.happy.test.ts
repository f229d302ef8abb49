import { startReceiver, type Receiver } from '@agent-platform/kit/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newAgent } from '../support/agents.js';
import { as, expectError, ISO_MS, matching, newAccount, newWebhook, startHarness, type Account, type CreatedWebhook, type Harness } from '../support/harness.js';
import { signedWith } from '../support/webhooks.js';

let h: Harness;
let receiver: Receiver;
beforeAll(async () => {
  // Loopback receivers need the development allowance; one attempt per delivery, so one failure fails an endpoint.
  h = await startHarness({ ALLOW_PRIVATE_NETWORK_URLS: 'true', WEBHOOK_RETRY_SCHEDULE: '0' });
  // Answers 200, except under /failing/.
  receiver = await startReceiver((request) => (request.path.startsWith('/failing/') ? { status: 500 } : { status: 200 }));
});
afterAll(async () => {
  await receiver.close();
  await h.close();
});

const WEBHOOK_ID = /^wh_[0-9A-HJKMNP-TV-Z]{26}$/;
let endpoints = 0;

/** A path of the receiver no other test uses. */
function endpoint(prefix = '/hooks/'): string {
  endpoints += 1;
  return receiver.url(`${prefix}${endpoints}`);
}

/** Sends the webhook's test event and answers the request the receiver got. */
async function testSend(account: Account, webhook: { id: string; url: string }) {
  const path = new URL(webhook.url).pathname;
  const before = receiver.received(path).length;
  const tested = await as(h.app, account.token, { method: 'POST', url: `/api/v1/webhooks/${webhook.id}/test`, payload: { event_type: 'agent.created' } });
  expect(tested.statusCode, tested.body).toBe(200);
  const arrived = receiver.received(path);
  expect(arrived).toHaveLength(before + 1);
  return arrived.at(-1)!;
}

async function read(account: Account, webhookId: string): Promise<unknown> {
  const got = await as(h.app, account.token, { method: 'GET', url: `/api/v1/webhooks/${webhookId}` });
  expect(got.statusCode, got.body).toBe(200);
  return got.json();
}

/** The webhook as reads show it: everything but the secret. */
function withoutSecret<T extends { signing_secret: string }>({ signing_secret: _secret, ...webhook }: T): Omit<T, 'signing_secret'> {
  return webhook;
}

describe('POST /webhooks', () => {
  it('answers 201 with the webhook and the secret that signs its deliveries, field by field', async () => {
    const account = await newAccount(h.app);
    const payload = {
      url: endpoint(),
      events: ['agent.created', 'agent.message.completed'],
      metadata: { team: 'ops', nested: { limits: [1, 2] } },
      description: 'Agents feed',
      unknown_field: 'ignored',
    };
    const created = await as(h.app, account.token, { method: 'POST', url: '/api/v1/webhooks', payload });
    expect(created.statusCode, created.body).toBe(201);
    const webhook = created.json<CreatedWebhook>();
    expect(webhook).toEqual({
      id: matching(WEBHOOK_ID),
      url: payload.url,
      events: ['agent.created', 'agent.message.completed'],
      status: 'active',
      description: 'Agents feed',
      metadata: { team: 'ops', nested: { limits: [1, 2] } },
      signing_secret: matching(/^whsec_/),
      created_at: matching(ISO_MS),
      updated_at: webhook.created_at,
    });
    expect(await read(account, webhook.id)).toEqual(withoutSecret(webhook));
    const delivered = await testSend(account, webhook);
    expect(signedWith(delivered, webhook.signing_secret)).toBe(true);
    expect(JSON.parse(delivered.body)).toMatchObject({ type: 'agent.created', tenant_id: account.tenantId });
  });

  it('signs with a supplied secret; description is null and metadata {} when absent', async () => {
    const account = await newAccount(h.app);
    const secret = 'my-own-secret-0123456789';
    const created = await as(h.app, account.token, { method: 'POST', url: '/api/v1/webhooks', payload: { url: endpoint(), events: ['*'], secret } });
    expect(created.statusCode, created.body).toBe(201);
    const webhook = created.json<CreatedWebhook>();
    expect(webhook).toMatchObject({ events: ['*'], description: null, metadata: {}, signing_secret: secret });
    expect(signedWith(await testSend(account, webhook), secret)).toBe(true);
  });
});

describe('GET /webhooks and GET /webhooks/{webhook_id}', () => {
  it("lists the tenant's webhooks newest first, paged, without any secret", async () => {
    const account = await newAccount(h.app);
    const first = await newWebhook(h.app, account.token, { url: endpoint(), description: 'first' });
    const second = await newWebhook(h.app, account.token, { url: endpoint(), description: 'second' });
    const third = await newWebhook(h.app, account.token, { url: endpoint(), description: 'third', metadata: { n: 3 } });

    const listed = await as(h.app, account.token, { method: 'GET', url: '/api/v1/webhooks' });
    expect(listed.statusCode).toBe(200);
    expect(listed.json()).toEqual({ items: [third, second, first].map(withoutSecret), total: 3, page: 1, per_page: 20 });
    expect(listed.body).not.toContain('whsec_');

    const paged = await as(h.app, account.token, { method: 'GET', url: '/api/v1/webhooks', query: { page: '2', per_page: '1' } });
    expect(paged.json()).toEqual({ items: [withoutSecret(second)], total: 3, page: 2, per_page: 1 });
    expect((await as(h.app, (await newAccount(h.app)).token, { method: 'GET', url: '/api/v1/webhooks' })).json()).toMatchObject({ items: [], total: 0 });
  });

  it('gets one webhook, without its secret', async () => {
    const account = await newAccount(h.app);
    const url = endpoint();
    const created = await newWebhook(h.app, account.token, { url, metadata: { a: 1 } });
    expect(await read(account, created.id)).toEqual({
      id: created.id,
      url,
      events: ['agent.created'],
      status: 'active',
      description: null,
      metadata: { a: 1 },
      created_at: created.created_at,
      updated_at: created.created_at,
    });
  });
});

describe('PATCH /webhooks/{webhook_id}', () => {
  it('changes only the fields sent; events and metadata are replaced whole', async () => {
    const account = await newAccount(h.app);
    const created = await newWebhook(h.app, account.token, { url: endpoint(), events: ['agent.created'], metadata: { keep: true }, description: 'before' });
    const url = `/api/v1/webhooks/${created.id}`;

    const elsewhere = endpoint();
    const moved = await as(h.app, account.token, { method: 'PATCH', url, payload: { url: elsewhere } });
    expect(moved.statusCode, moved.body).toBe(200);
    expect(moved.json()).toEqual({ ...withoutSecret(created), url: elsewhere, updated_at: matching(ISO_MS) });
    expect(await read(account, created.id)).toEqual(moved.json());

    const changed = await as(h.app, account.token, { method: 'PATCH', url, payload: { events: ['workflow.execution.failed', 'agent.updated'], metadata: { replaced: 1 }, description: 'after' } });
    const expected = {
      id: created.id,
      url: elsewhere,
      events: ['workflow.execution.failed', 'agent.updated'],
      status: 'active',
      description: 'after',
      metadata: { replaced: 1 },
      created_at: created.created_at,
      updated_at: matching(ISO_MS),
    };
    expect(changed.json()).toEqual(expected);
    expect(await read(account, created.id)).toEqual(expected);

    const unchanged = await as(h.app, account.token, { method: 'PATCH', url, payload: {} });
    expect(unchanged.statusCode).toBe(200);
    expect(await read(account, created.id)).toEqual(expected);
  });

  it('leaves the subscription alone unless events are sent', async () => {
    const account = await newAccount(h.app);
    const created = await newWebhook(h.app, account.token, { url: endpoint() });
    const url = `/api/v1/webhooks/${created.id}`;
    await as(h.app, account.token, { method: 'PATCH', url, payload: { description: 'no events' } });
    expect(await read(account, created.id)).toMatchObject({ events: ['agent.created'], description: 'no events', metadata: {} });
    await as(h.app, account.token, { method: 'PATCH', url, payload: { events: ['agent.updated'] } });
    expect(await read(account, created.id)).toMatchObject({ events: ['agent.updated'], description: 'no events', metadata: {} });
  });
});

describe('DELETE /webhooks/{webhook_id}', () => {
  it('answers success and the webhook is gone', async () => {
    const account = await newAccount(h.app);
    const created = await newWebhook(h.app, account.token, { url: endpoint() });
    const deleted = await as(h.app, account.token, { method: 'DELETE', url: `/api/v1/webhooks/${created.id}` });
    expect(deleted.statusCode).toBe(200);
    expect(deleted.json()).toEqual({ success: true, message: 'Webhook deleted.' });
    expectError(await as(h.app, account.token, { method: 'GET', url: `/api/v1/webhooks/${created.id}` }), 404, 'not_found');
    expect((await as(h.app, account.token, { method: 'GET', url: '/api/v1/webhooks' })).json()).toMatchObject({ items: [], total: 0 });
  });
});

describe('POST /webhooks/{webhook_id}/enable and /rotate-secret', () => {
  it('re-activates a webhook that failed its deliveries, idempotently', async () => {
    const account = await newAccount(h.app);
    const created = await newWebhook(h.app, account.token, { url: endpoint('/failing/') });
    // agent.created goes to the receiver, which answers 500: the only attempt fails, and the endpoint with it.
    await newAgent(h.app, account.token);
    await expect.poll(async () => ((await read(account, created.id)) as { status: string }).status, { timeout: 4_000 }).toBe('failed');
    for (let n = 0; n < 2; n += 1) {
      const enabled = await as(h.app, account.token, { method: 'POST', url: `/api/v1/webhooks/${created.id}/enable` });
      expect(enabled.statusCode, enabled.body).toBe(200);
      expect(enabled.json()).toEqual({ ...withoutSecret(created), status: 'active', updated_at: matching(ISO_MS) });
    }
    expect(await read(account, created.id)).toMatchObject({ status: 'active' });
  });

  it('rotates the signing secret: the new one is returned with the webhook and signs from then on', async () => {
    const account = await newAccount(h.app);
    const created = await newWebhook(h.app, account.token, { url: endpoint() });
    const rotated = await as(h.app, account.token, { method: 'POST', url: `/api/v1/webhooks/${created.id}/rotate-secret` });
    expect(rotated.statusCode, rotated.body).toBe(200);
    const body = rotated.json<CreatedWebhook>();
    expect(body).toEqual({ ...created, signing_secret: matching(/^whsec_/), updated_at: matching(ISO_MS) });
    expect(body.signing_secret).not.toBe(created.signing_secret);
    const delivered = await testSend(account, created);
    expect(signedWith(delivered, body.signing_secret)).toBe(true);
    expect(signedWith(delivered, created.signing_secret)).toBe(false);
  });
});

describe('the /v1 alias', () => {
  it('runs the same operations', async () => {
    const account = await newAccount(h.app);
    const created = await as(h.app, account.token, { method: 'POST', url: '/v1/webhooks', payload: { url: endpoint(), events: ['*'] } });
    expect(created.statusCode, created.body).toBe(201);
    const { id } = created.json<{ id: string }>();
    const viaAlias = await as(h.app, account.token, { method: 'GET', url: `/v1/webhooks/${id}` });
    expect(viaAlias.statusCode).toBe(200);
    expect(viaAlias.json()).toEqual(await read(account, id));
    expect((await as(h.app, account.token, { method: 'GET', url: '/v1/webhooks' })).json()).toMatchObject({ items: [{ id }], total: 1 });
    expect((await as(h.app, account.token, { method: 'POST', url: `/v1/webhooks/${id}/enable` })).statusCode).toBe(200);
  });
});
