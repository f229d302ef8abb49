import { PrincipalKind } from '@agent-platform/kit/grpc';
import { startReceiver, type Receiver } from '@agent-platform/kit/testing';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lastCall, principalOf } from '../support/calls.js';
import { addMember, as, newAccount, newApiKey, newWebhook, startHarness, type Account, type Harness } from '../support/harness.js';
import { signedWith } from '../support/webhooks.js';

let h: Harness;
let receiver: Receiver;
beforeAll(async () => {
  // Webhooks here point at a loopback receiver, which needs the development allowance.
  h = await startHarness({ ALLOW_PRIVATE_NETWORK_URLS: 'true' });
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
  await h.close();
});

type Route = InjectOptions & { method: 'GET' | 'POST' | 'PATCH' | 'DELETE'; url: string };

/** Every webhook route, split as the policy table splits them. */
function routes(webhookId: string, deliveryId: string): { reads: Route[]; writes: Route[] } {
  const base = `/api/v1/webhooks/${webhookId}`;
  return {
    reads: [
      { method: 'GET', url: '/api/v1/webhooks' },
      { method: 'GET', url: base },
      { method: 'GET', url: `${base}/deliveries` },
      { method: 'GET', url: `${base}/deliveries/${deliveryId}` },
    ],
    writes: [
      { method: 'POST', url: '/api/v1/webhooks', payload: { url: receiver.url('/hooks/created'), events: ['*'] } },
      { method: 'PATCH', url: base, payload: { description: 'changed' } },
      { method: 'POST', url: `${base}/enable` },
      { method: 'POST', url: `${base}/rotate-secret` },
      { method: 'POST', url: `${base}/test`, payload: { event_type: 'agent.created' } },
      { method: 'POST', url: `${base}/deliveries/${deliveryId}/retry` },
      { method: 'DELETE', url: base },
    ],
  };
}

let endpoints = 0;

/** A webhook of `owner`'s on a path of the receiver of its own, with one delivery (a test send). */
async function webhookWithDelivery(owner: Account): Promise<{ webhookId: string; deliveryId: string; secret: string; path: string }> {
  endpoints += 1;
  const path = `/hooks/${endpoints}`;
  const webhook = await newWebhook(h.app, owner.token, { url: receiver.url(path) });
  const tested = await as(h.app, owner.token, { method: 'POST', url: `/api/v1/webhooks/${webhook.id}/test`, payload: { event_type: 'agent.created' } });
  if (tested.statusCode !== 200) throw new Error(`test send: ${tested.statusCode} ${tested.body}`);
  return { webhookId: webhook.id, deliveryId: tested.json<{ delivery_id: string }>().delivery_id, secret: webhook.signing_secret, path };
}

/** An owner with one webhook that has one delivery, and every route on them. */
async function seeded(): Promise<{ owner: Account; webhookId: string; deliveryId: string; secret: string; path: string; reads: Route[]; writes: Route[] }> {
  const owner = await newAccount(h.app);
  const webhook = await webhookWithDelivery(owner);
  return { owner, ...webhook, ...routes(webhook.webhookId, webhook.deliveryId) };
}

function expectStatus(response: LightMyRequestResponse, status: number, route: Route): void {
  expect(response.statusCode, `${route.method} ${route.url}: ${response.body}`).toBe(status);
}

function expectForbidden(response: LightMyRequestResponse, route: Route, message?: RegExp): void {
  expectStatus(response, 403, route);
  expect(response.json()).toMatchObject({ error: 'forbidden' });
  if (message) expect(response.json<{ message: string }>().message).toMatch(message);
}

const success = (route: Route) => (route.url === '/api/v1/webhooks' && route.method === 'POST' ? 201 : route.url.endsWith('/retry') ? 202 : 200);

describe('401 unauthorized', () => {
  it('on every webhook route without a credential or with a bad one; nothing reaches the dispatcher', async () => {
    const { reads, writes } = routes('wh_x', 'dlv_x');
    const before = h.webhooks.calls.length;
    for (const route of [...reads, ...writes]) {
      const missing = await h.app.inject(route);
      expectStatus(missing, 401, route);
      expect(missing.headers['www-authenticate']).toBe('Bearer realm="agent-platform"');
      expectStatus(await as(h.app, 'ap_live_00000000000000000000000000000000', route), 401, route);
    }
    expect(h.webhooks.calls.length).toBe(before);
  });
});

describe('roles (decisions §3)', () => {
  it('a viewer and a member read but cannot change anything', async () => {
    const { owner, reads, writes } = await seeded();
    for (const role of ['viewer', 'member']) {
      const colleague = await newAccount(h.app);
      await addMember(h.app, owner, colleague, role);
      const query = { tenant_id: owner.tenantId };
      for (const route of reads) expectStatus(await as(h.app, colleague.token, { ...route, query }), 200, route);
      const before = h.webhooks.calls.length;
      for (const route of writes) expectForbidden(await as(h.app, colleague.token, { ...route, query }), route, /admin/);
      expect(h.webhooks.calls.length).toBe(before);
    }
  });

  it('an admin manages the webhooks of the tenant', async () => {
    const { owner, reads, writes } = await seeded();
    const admin = await newAccount(h.app);
    await addMember(h.app, owner, admin, 'admin');
    const query = { tenant_id: owner.tenantId };
    for (const route of [...reads, ...writes]) expectStatus(await as(h.app, admin.token, { ...route, query }), success(route), route);
  });
});

describe('API key scopes (decisions §4)', () => {
  it('webhooks:read opens the reads only; webhooks:write the writes only', async () => {
    const { owner, reads, writes } = await seeded();
    const reader = (await newApiKey(h.app, owner, ['webhooks:read'])).key;
    const writer = (await newApiKey(h.app, owner, ['webhooks:write'])).key;
    for (const route of reads) {
      expectStatus(await as(h.app, reader, route), 200, route);
      expectForbidden(await as(h.app, writer, route), route, /webhooks:read/);
    }
    for (const route of writes) expectForbidden(await as(h.app, reader, route), route, /webhooks:write/);
    for (const route of writes) expectStatus(await as(h.app, writer, route), success(route), route);
  });

  it('another scope opens nothing; * opens everything', async () => {
    const { owner, reads, writes } = await seeded();
    const other = (await newApiKey(h.app, owner, ['agents:read', 'agents:write', 'billing:read'])).key;
    const before = h.webhooks.calls.length;
    for (const route of [...reads, ...writes]) expectForbidden(await as(h.app, other, route), route);
    expect(h.webhooks.calls.length).toBe(before);
    const all = (await newApiKey(h.app, owner, ['*'])).key;
    for (const route of [...reads, ...writes]) expectStatus(await as(h.app, all, route), success(route), route);
  });

  it("a key acts with its creator's role: a demoted admin's webhooks:write key cannot write", async () => {
    const { owner, reads, writes } = await seeded();
    const colleague = await newAccount(h.app);
    await addMember(h.app, owner, colleague, 'admin');
    const minted = await as(h.app, colleague.token, {
      method: 'POST',
      url: '/api/v1/auth/api-keys',
      query: { tenant_id: owner.tenantId },
      payload: { name: 'hooks', scopes: ['webhooks:read', 'webhooks:write'] },
    });
    expect(minted.statusCode).toBe(201);
    const demoted = await as(h.app, owner.token, {
      method: 'PATCH',
      url: `/api/v1/tenants/${owner.tenantId}/members/${colleague.userId}`,
      payload: { role: 'member' },
    });
    expect(demoted.statusCode).toBe(200);
    const key = minted.json<{ key: string }>().key;
    for (const route of reads) expectStatus(await as(h.app, key, route), 200, route);
    for (const route of writes) expectForbidden(await as(h.app, key, route), route, /admin/);
  });
});

describe('tenants', () => {
  it("403 for another tenant's tenant_id, by token and by key, and the dispatcher is not asked", async () => {
    const alice = await newAccount(h.app);
    const bob = await seeded();
    const { reads, writes } = routes(bob.webhookId, 'dlv_x');
    const key = (await newApiKey(h.app, alice, ['*'])).key;
    const before = h.webhooks.calls.length;
    for (const route of [...reads, ...writes]) {
      expectForbidden(await as(h.app, alice.token, { ...route, query: { tenant_id: bob.owner.tenantId } }), route);
      expectForbidden(await as(h.app, key, { ...route, query: { tenant_id: bob.owner.tenantId } }), route);
    }
    expect(h.webhooks.calls.length).toBe(before);
  });

  it("another tenant's webhook is not found, and lists hold only the caller's", async () => {
    const alice = await newAccount(h.app);
    const bob = await seeded();
    const { reads, writes } = routes(bob.webhookId, bob.deliveryId);
    const foreign = [...reads, ...writes].filter((route) => route.url !== '/api/v1/webhooks');
    for (const route of foreign) expectStatus(await as(h.app, alice.token, route), 404, route);
    expect((await as(h.app, alice.token, { method: 'GET', url: '/api/v1/webhooks' })).json()).toMatchObject({ items: [], total: 0 });
    // Bob's webhook is untouched: not deleted, changed, tested or replayed, and its secret not rotated.
    const own = await as(h.app, bob.owner.token, { method: 'GET', url: `/api/v1/webhooks/${bob.webhookId}` });
    expect(own.json()).toMatchObject({ description: null, status: 'active' });
    expect((await as(h.app, bob.owner.token, { method: 'GET', url: `/api/v1/webhooks/${bob.webhookId}/deliveries` })).json()).toMatchObject({
      items: [{ id: bob.deliveryId, attempts: 1 }],
      total: 1,
    });
    const tested = await as(h.app, bob.owner.token, { method: 'POST', url: `/api/v1/webhooks/${bob.webhookId}/test`, payload: { event_type: 'agent.created' } });
    expect(tested.statusCode).toBe(200);
    const received = receiver.received(bob.path);
    expect(received).toHaveLength(2);
    expect(signedWith(received[1]!, bob.secret)).toBe(true);
  });

  it("another tenant's delivery is not found, even asked for under the caller's own webhook", async () => {
    const alice = await newAccount(h.app);
    const aliceWebhook = await webhookWithDelivery(alice);
    const bob = await seeded();
    const key = (await newApiKey(h.app, alice, ['webhooks:read'])).key;
    for (const url of [`/api/v1/webhooks/${bob.webhookId}/deliveries/${bob.deliveryId}`, `/api/v1/webhooks/${aliceWebhook.webhookId}/deliveries/${bob.deliveryId}`]) {
      const route: Route = { method: 'GET', url };
      expectStatus(await as(h.app, alice.token, route), 404, route);
      expectStatus(await as(h.app, key, route), 404, route);
    }
    const own: Route = { method: 'GET', url: `/api/v1/webhooks/${bob.webhookId}/deliveries/${bob.deliveryId}` };
    expectStatus(await as(h.app, bob.owner.token, own), 200, own);
  });

  it('forwards the principal with the resolved tenant, its role and the request id', async () => {
    const owner = await newAccount(h.app);
    const admin = await newAccount(h.app);
    await addMember(h.app, owner, admin, 'admin');
    await as(h.app, admin.token, { method: 'GET', url: '/api/v1/webhooks', query: { tenant_id: owner.tenantId }, headers: { 'x-request-id': 'req-wh-principal' } });
    const listed = lastCall(h.webhooks, 'ListWebhooks');
    expect(principalOf(listed)).toMatchObject({ kind: PrincipalKind.KIND_USER, userId: admin.userId, apiKeyId: '', tenantId: owner.tenantId, role: 'admin', scopes: [] });
    expect(listed?.requestId).toBe('req-wh-principal');

    await as(h.app, admin.token, { method: 'GET', url: '/api/v1/webhooks' });
    expect(principalOf(lastCall(h.webhooks, 'ListWebhooks'))).toMatchObject({ tenantId: admin.tenantId, role: 'owner' });

    const key = await newApiKey(h.app, owner, ['webhooks:write']);
    const created = await as(h.app, key.key, { method: 'POST', url: '/api/v1/webhooks', payload: { url: receiver.url('/hooks/by-key'), events: ['*'] } });
    expect(created.statusCode, created.body).toBe(201);
    expect(principalOf(lastCall(h.webhooks, 'CreateWebhook'))).toEqual({
      kind: PrincipalKind.KIND_API_KEY,
      userId: owner.userId,
      apiKeyId: key.id,
      tenantId: owner.tenantId,
      role: 'owner',
      scopes: ['webhooks:write'],
    });
    // The webhook is the key's tenant's.
    expect((await as(h.app, owner.token, { method: 'GET', url: '/api/v1/webhooks' })).json()).toMatchObject({ items: [{ id: created.json<{ id: string }>().id }], total: 1 });
  });
});
