import { describe, expect, it } from 'vitest';
import { Api, newAccount, newApiKey } from './harness/client.js';

// The suites allow private addresses (ALLOW_PRIVATE_NETWORK_URLS) so a local receiver can be reached.
const VALID = { url: 'http://127.0.0.1:9/agent-platform', events: ['billing.purchase.completed'] };

function expect422(response: { status: number; body: unknown }, fields: string[]): void {
  expect(response.status, JSON.stringify(response.body)).toBe(422);
  const body = response.body as { error: string; details?: { field: string }[] };
  expect(body.error).toBe('validation_error');
  expect(body.details?.map((detail) => detail.field).sort()).toEqual([...fields].sort());
}

describe('webhook validation', () => {
  it.each([
    ['a missing url and events', {}, ['url', 'events']],
    ['a url that is not one', { ...VALID, url: 'not a url' }, ['url']],
    ['an empty subscription', { ...VALID, events: [] }, ['events']],
    ['names that are not event types', { ...VALID, events: ['agent.message', 'workflow.completed'] }, ['events[0]', 'events[1]']],
    ['a short secret', { ...VALID, secret: 'too-short' }, ['secret']],
    ['metadata that is not an object', { ...VALID, metadata: ['a'] }, ['metadata']],
  ])('rejects %s with 422', async (_label, json, fields) => {
    const api = new Api();
    const account = await newAccount(api);
    expect422(await api.post('/api/v1/webhooks', { token: account.accessToken, json }), fields);
  });

  it('refuses a test of an unknown event type', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const created = await api.post('/api/v1/webhooks', { token: account.accessToken, json: VALID });
    expect422(await api.post(`/api/v1/webhooks/${created.body.id as string}/test`, { token: account.accessToken, json: { event_type: 'agent.message' } }), ['event_type']);
  });

  it('answers 404 for unknown webhooks and deliveries', async () => {
    const api = new Api();
    const account = await newAccount(api);
    expect((await api.get('/api/v1/webhooks/wh_01HZZZZZZZZZZZZZZZZZZZZZZZ', { token: account.accessToken })).status).toBe(404);
    const created = await api.post('/api/v1/webhooks', { token: account.accessToken, json: VALID });
    const retry = await api.post(`/api/v1/webhooks/${created.body.id as string}/deliveries/dlv_01HZZZZZZZZZZZZZZZZZZZZZZZ/retry`, { token: account.accessToken });
    expect(retry.status).toBe(404);
  });
});

describe('webhook access', () => {
  it('keeps tenants apart', async () => {
    const api = new Api();
    const alice = await newAccount(api);
    const bob = await newAccount(api);
    const created = await api.post('/api/v1/webhooks', { token: alice.accessToken, json: VALID });
    const path = `/api/v1/webhooks/${created.body.id as string}`;
    expect((await api.get(path, { token: bob.accessToken })).status).toBe(404);
    expect((await api.patch(path, { token: bob.accessToken, json: { events: ['*'] } })).status).toBe(404);
    expect((await api.delete(path, { token: bob.accessToken })).status).toBe(404);
    expect((await api.get(`${path}/deliveries`, { token: bob.accessToken })).status).toBe(404);
    expect((await api.get('/api/v1/webhooks', { token: bob.accessToken })).body.total).toBe(0);
    expect((await api.get('/api/v1/webhooks', { token: bob.accessToken, query: { tenant_id: alice.tenantId } })).status).toBe(403);
  });

  it('needs webhooks:write on a key and the admin role to change endpoints', async () => {
    const api = new Api();
    const owner = await newAccount(api);
    const reader = await newApiKey(api, owner, ['webhooks:read']);
    expect((await api.get('/api/v1/webhooks', { token: reader.key })).status).toBe(200);
    expect((await api.post('/api/v1/webhooks', { token: reader.key, json: VALID })).status).toBe(403);
    const writer = await newApiKey(api, owner, ['webhooks:write', 'webhooks:read']);
    expect((await api.post('/api/v1/webhooks', { token: writer.key, json: VALID })).status).toBe(201);

    const member = await newAccount(api);
    await api.post(`/api/v1/tenants/${owner.tenantId}/members`, { token: owner.accessToken, json: { email: member.email, role: 'member' } });
    const asMember = { token: member.accessToken, query: { tenant_id: owner.tenantId } };
    expect((await api.get('/api/v1/webhooks', asMember)).status).toBe(200);
    expect((await api.post('/api/v1/webhooks', { ...asMember, json: VALID })).status).toBe(403);
  });
});
