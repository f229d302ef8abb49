import type { AgentPlatformClient } from '@agent-platform/client';
import { describe, expect, it } from 'vitest';
import { Api, newAccount, newApiKey } from './harness/client.js';
import { expectError, expectStatus, statusOf } from './harness/results.js';

// The suites allow private addresses (ALLOW_PRIVATE_NETWORK_URLS) so a local receiver can be reached.
const VALID = { url: 'http://127.0.0.1:9/agent-platform', events: ['billing.purchase.completed'] };

async function createWebhook(client: AgentPlatformClient): Promise<string> {
  return expectStatus(await client.POST('/api/v1/webhooks', { body: VALID }), 201).id;
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
    // Raw: the table includes bodies the contract forbids (no url or events at all).
    expectError(await api.post('/api/v1/webhooks', { token: account.accessToken, json }), 422, 'validation_error', fields);
  });

  it('refuses a test of an unknown event type', async () => {
    const { client } = await newAccount(new Api());
    const webhookId = await createWebhook(client);
    const tested = await client.POST('/api/v1/webhooks/{webhook_id}/test', { params: { path: { webhook_id: webhookId } }, body: { event_type: 'agent.message' } });
    expectError(tested, 422, 'validation_error', ['event_type']);
  });

  it('answers 404 for unknown webhooks and deliveries', async () => {
    const { client } = await newAccount(new Api());
    expect(await statusOf(client.GET('/api/v1/webhooks/{webhook_id}', { params: { path: { webhook_id: 'wh_01HZZZZZZZZZZZZZZZZZZZZZZZ' } } }))).toBe(404);
    const webhookId = await createWebhook(client);
    const retry = client.POST('/api/v1/webhooks/{webhook_id}/deliveries/{delivery_id}/retry', {
      params: { path: { webhook_id: webhookId, delivery_id: 'dlv_01HZZZZZZZZZZZZZZZZZZZZZZZ' } },
    });
    expect(await statusOf(retry)).toBe(404);
  });
});

describe('webhook access', () => {
  it('keeps tenants apart', async () => {
    const api = new Api();
    const alice = await newAccount(api);
    const bob = await newAccount(api);
    const webhook = { params: { path: { webhook_id: await createWebhook(alice.client) } } };
    expect(await statusOf(bob.client.GET('/api/v1/webhooks/{webhook_id}', webhook))).toBe(404);
    expect(await statusOf(bob.client.PATCH('/api/v1/webhooks/{webhook_id}', { ...webhook, body: { events: ['*'] } }))).toBe(404);
    expect(await statusOf(bob.client.DELETE('/api/v1/webhooks/{webhook_id}', webhook))).toBe(404);
    expect(await statusOf(bob.client.GET('/api/v1/webhooks/{webhook_id}/deliveries', webhook))).toBe(404);
    expect(expectStatus(await bob.client.GET('/api/v1/webhooks')).total).toBe(0);
    expect(await statusOf(bob.client.GET('/api/v1/webhooks', { params: { query: { tenant_id: alice.tenantId } } }))).toBe(403);
  });

  it('needs webhooks:write on a key and the admin role to change endpoints', async () => {
    const api = new Api();
    const owner = await newAccount(api);
    const reader = (await newApiKey(api, owner, ['webhooks:read'])).client;
    expect(await statusOf(reader.GET('/api/v1/webhooks'))).toBe(200);
    expect(await statusOf(reader.POST('/api/v1/webhooks', { body: VALID }))).toBe(403);
    const writer = (await newApiKey(api, owner, ['webhooks:write', 'webhooks:read'])).client;
    expect(await statusOf(writer.POST('/api/v1/webhooks', { body: VALID }))).toBe(201);

    const member = await newAccount(api);
    const added = await owner.client.POST('/api/v1/tenants/{tenant_id}/members', { params: { path: { tenant_id: owner.tenantId } }, body: { email: member.email, role: 'member' } });
    expectStatus(added, 201);
    const asMember = { params: { query: { tenant_id: owner.tenantId } } };
    expect(await statusOf(member.client.GET('/api/v1/webhooks', asMember))).toBe(200);
    expect(await statusOf(member.client.POST('/api/v1/webhooks', { ...asMember, body: VALID }))).toBe(403);
  });
});
