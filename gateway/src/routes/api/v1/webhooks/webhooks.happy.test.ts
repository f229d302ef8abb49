import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { as, expectError, ISO_MS, matching, newAccount, newWebhook, startHarness, type Harness } from '../../../../testing/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

const WEBHOOK_ID = /^wh_[0-9A-HJKMNP-TV-Z]{26}$/;

describe('POST /webhooks', () => {
  it('answers 201 with the webhook and its signing secret, field by field, and forwards the request as sent', async () => {
    const account = await newAccount(h.app);
    const payload = {
      url: 'https://receiver.example.com/hooks/agents',
      events: ['agent.created', 'agent.message.completed'],
      metadata: { team: 'ops', nested: { limits: [1, 2] } },
      description: 'Agents feed',
      unknown_field: 'ignored',
    };
    const created = await as(h.app, account.token, { method: 'POST', url: '/api/v1/webhooks', payload });
    expect(created.statusCode).toBe(201);
    expect(created.json()).toEqual({
      id: matching(WEBHOOK_ID),
      url: 'https://receiver.example.com/hooks/agents',
      events: ['agent.created', 'agent.message.completed'],
      status: 'active',
      description: 'Agents feed',
      metadata: { team: 'ops', nested: { limits: [1, 2] } },
      signing_secret: matching(/^whsec_/),
      created_at: matching(ISO_MS),
      updated_at: matching(ISO_MS),
    });
    const [call] = h.webhooks.callsOf('createWebhook').slice(-1);
    expect(call?.request).toEqual({
      url: payload.url,
      events: payload.events,
      metadataJson: JSON.stringify(payload.metadata),
      description: 'Agents feed',
    });
    const row = h.webhooks.model.webhooks.get(created.json<{ id: string }>().id);
    expect(row).toMatchObject({ tenantId: account.tenantId, secret: created.json<{ signing_secret: string }>().signing_secret });
  });

  it('passes a supplied secret on; description is null and metadata {} when absent', async () => {
    const account = await newAccount(h.app);
    const secret = 'my-own-secret-0123456789';
    const created = await as(h.app, account.token, { method: 'POST', url: '/api/v1/webhooks', payload: { url: 'https://r.example.com/', events: ['*'], secret } });
    expect(created.statusCode).toBe(201);
    expect(created.json()).toMatchObject({ events: ['*'], description: null, metadata: {}, signing_secret: secret });
    const [call] = h.webhooks.callsOf('createWebhook').slice(-1);
    expect(call?.request).toEqual({ url: 'https://r.example.com/', events: ['*'], secret });
  });
});

describe('GET /webhooks and GET /webhooks/{webhook_id}', () => {
  it('lists the tenant\'s webhooks newest first, paged, without any secret', async () => {
    const account = await newAccount(h.app);
    const first = await newWebhook(h.app, account.token, { description: 'first' });
    const second = await newWebhook(h.app, account.token, { description: 'second' });
    const third = await newWebhook(h.app, account.token, { description: 'third', metadata: { n: 3 } });

    const listed = await as(h.app, account.token, { method: 'GET', url: '/api/v1/webhooks' });
    expect(listed.statusCode).toBe(200);
    const { signing_secret: _secret, ...thirdWithoutSecret } = third;
    expect(listed.json()).toEqual({
      items: [
        { ...thirdWithoutSecret, status: 'active', description: 'third', metadata: { n: 3 }, updated_at: matching(ISO_MS) },
        expect.objectContaining({ id: second.id, description: 'second' }),
        expect.objectContaining({ id: first.id, description: 'first' }),
      ],
      total: 3,
      page: 1,
      per_page: 20,
    });
    expect(listed.body).not.toContain('whsec_');

    const paged = await as(h.app, account.token, { method: 'GET', url: '/api/v1/webhooks', query: { page: '2', per_page: '1' } });
    expect(paged.json()).toMatchObject({ items: [{ id: second.id }], total: 3, page: 2, per_page: 1 });
    expect(h.webhooks.callsOf('listWebhooks').at(-1)?.request).toEqual({ page: { page: 2, perPage: 1 } });
  });

  it('gets one webhook, without its secret', async () => {
    const account = await newAccount(h.app);
    const created = await newWebhook(h.app, account.token, { metadata: { a: 1 } });
    const got = await as(h.app, account.token, { method: 'GET', url: `/api/v1/webhooks/${created.id}` });
    expect(got.statusCode).toBe(200);
    expect(got.json()).toEqual({
      id: created.id,
      url: 'https://receiver.example.com/hooks',
      events: ['agent.created'],
      status: 'active',
      description: null,
      metadata: { a: 1 },
      created_at: created.created_at,
      updated_at: matching(ISO_MS),
    });
  });
});

describe('PATCH /webhooks/{webhook_id}', () => {
  it('changes only the fields sent', async () => {
    const account = await newAccount(h.app);
    const created = await newWebhook(h.app, account.token, { events: ['agent.created'], metadata: { keep: true }, description: 'before' });
    const url = `/api/v1/webhooks/${created.id}`;

    const moved = await as(h.app, account.token, { method: 'PATCH', url, payload: { url: 'https://elsewhere.example.com/in' } });
    expect(moved.statusCode).toBe(200);
    expect(moved.json()).toMatchObject({ url: 'https://elsewhere.example.com/in', events: ['agent.created'], metadata: { keep: true }, description: 'before' });
    expect(h.webhooks.callsOf('updateWebhook').at(-1)?.request).toEqual({ webhookId: created.id, url: 'https://elsewhere.example.com/in', setEvents: false, events: [] });

    const changed = await as(h.app, account.token, {
      method: 'PATCH',
      url,
      payload: { events: ['workflow.execution.failed', '*'], metadata: { replaced: 1 }, description: 'after' },
    });
    expect(h.webhooks.callsOf('updateWebhook').at(-1)?.request).toEqual({
      webhookId: created.id,
      setEvents: true,
      events: ['workflow.execution.failed', '*'],
      metadataJson: '{"replaced":1}',
      description: 'after',
    });
    expect(changed.json()).toEqual({
      id: created.id,
      url: 'https://elsewhere.example.com/in',
      events: ['workflow.execution.failed', '*'],
      status: 'active',
      description: 'after',
      metadata: { replaced: 1 },
      created_at: created.created_at,
      updated_at: matching(ISO_MS),
    });

    const unchanged = await as(h.app, account.token, { method: 'PATCH', url, payload: {} });
    expect(unchanged.json()).toMatchObject({ events: ['workflow.execution.failed', '*'], description: 'after' });
  });

  it('leaves the subscription alone unless events are sent', async () => {
    const account = await newAccount(h.app);
    const created = await newWebhook(h.app, account.token);
    const url = `/api/v1/webhooks/${created.id}`;
    await as(h.app, account.token, { method: 'PATCH', url, payload: { description: 'no events' } });
    await as(h.app, account.token, { method: 'PATCH', url, payload: { events: ['agent.updated'] } });
    const row = h.webhooks.model.webhooks.get(created.id);
    expect(row?.events).toEqual(['agent.updated']);
    expect(row?.description).toBe('no events');
    expect(row?.metadataJson).toBe('{}');
  });
});

describe('DELETE /webhooks/{webhook_id}', () => {
  it('answers success and the webhook is gone', async () => {
    const account = await newAccount(h.app);
    const created = await newWebhook(h.app, account.token);
    const deleted = await as(h.app, account.token, { method: 'DELETE', url: `/api/v1/webhooks/${created.id}` });
    expect(deleted.statusCode).toBe(200);
    expect(deleted.json()).toEqual({ success: true, message: 'Webhook deleted.' });
    expectError(await as(h.app, account.token, { method: 'GET', url: `/api/v1/webhooks/${created.id}` }), 404, 'not_found');
  });
});

describe('POST /webhooks/{webhook_id}/enable and /rotate-secret', () => {
  it('re-activates a failed webhook, idempotently', async () => {
    const account = await newAccount(h.app);
    const created = await newWebhook(h.app, account.token);
    const row = h.webhooks.model.webhooks.get(created.id);
    if (row) row.status = 'failed';
    expect((await as(h.app, account.token, { method: 'GET', url: `/api/v1/webhooks/${created.id}` })).json()).toMatchObject({ status: 'failed' });
    for (let n = 0; n < 2; n += 1) {
      const enabled = await as(h.app, account.token, { method: 'POST', url: `/api/v1/webhooks/${created.id}/enable` });
      expect(enabled.statusCode).toBe(200);
      expect(enabled.json()).toEqual({
        id: created.id,
        url: created.url,
        events: created.events,
        status: 'active',
        description: null,
        metadata: {},
        created_at: created.created_at,
        updated_at: matching(ISO_MS),
      });
    }
  });

  it('rotates the signing secret and returns the new one with the webhook', async () => {
    const account = await newAccount(h.app);
    const created = await newWebhook(h.app, account.token);
    const rotated = await as(h.app, account.token, { method: 'POST', url: `/api/v1/webhooks/${created.id}/rotate-secret` });
    expect(rotated.statusCode).toBe(200);
    const body = rotated.json<{ signing_secret: string }>();
    expect(body).toEqual({
      id: created.id,
      url: created.url,
      events: created.events,
      status: 'active',
      description: null,
      metadata: {},
      signing_secret: matching(/^whsec_/),
      created_at: created.created_at,
      updated_at: matching(ISO_MS),
    });
    expect(body.signing_secret).not.toBe(created.signing_secret);
    expect(h.webhooks.model.webhooks.get(created.id)?.secret).toBe(body.signing_secret);
  });
});

describe('the /v1 alias', () => {
  it('runs the same operations', async () => {
    const account = await newAccount(h.app);
    const created = await as(h.app, account.token, { method: 'POST', url: '/v1/webhooks', payload: { url: 'https://alias.example.com/', events: ['*'] } });
    expect(created.statusCode).toBe(201);
    const { id } = created.json<{ id: string }>();
    const viaAlias = await as(h.app, account.token, { method: 'GET', url: `/v1/webhooks/${id}` });
    const canonical = await as(h.app, account.token, { method: 'GET', url: `/api/v1/webhooks/${id}` });
    expect(viaAlias.statusCode).toBe(200);
    expect(viaAlias.json()).toEqual(canonical.json());
    expect((await as(h.app, account.token, { method: 'GET', url: '/v1/webhooks' })).json()).toMatchObject({ items: [{ id }], total: 1 });
    expect((await as(h.app, account.token, { method: 'POST', url: `/v1/webhooks/${id}/enable` })).statusCode).toBe(200);
  });
});
