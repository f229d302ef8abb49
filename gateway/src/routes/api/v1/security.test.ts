import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newSigningKey } from '../../../testing/identity-double.js';
import { addMember, as, newAccount, newApiKey, startHarness, type Harness } from '../../../testing/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

function expectUnauthorized(response: LightMyRequestResponse, message?: RegExp): void {
  expect(response.statusCode, response.body).toBe(401);
  expect(response.json()).toMatchObject({ error: 'unauthorized' });
  expect(response.headers['www-authenticate']).toMatch(/^Bearer realm="agent-platform"/);
  if (message) expect(response.json<{ message: string }>().message).toMatch(message);
}

function expectForbidden(response: LightMyRequestResponse): void {
  expect(response.statusCode, response.body).toBe(403);
  expect(response.json()).toMatchObject({ error: 'forbidden' });
  // An error after authentication still carries the rate-limit headers.
  expect(response.headers['x-ratelimit-limit']).toBeDefined();
}

const me = { method: 'GET' as const, url: '/api/v1/auth/me' };
const credits = { method: 'GET' as const, url: '/api/v1/billing/credits' };

describe('401 unauthorized', () => {
  it('without a credential, and for other schemes, garbage and unknown keys', async () => {
    const missing = await h.app.inject(me);
    expectUnauthorized(missing);
    expect(missing.headers['www-authenticate']).toBe('Bearer realm="agent-platform"');
    expect(missing.headers['x-ratelimit-limit']).toBeUndefined();
    const account = await newAccount(h.app);
    const basic = await h.app.inject({ ...me, headers: { authorization: `Basic ${account.token}` } });
    expectUnauthorized(basic);
    expect(basic.headers['www-authenticate']).toContain('error="invalid_token"');
    expectUnauthorized(await as(h.app, 'garbage', me));
    expectUnauthorized(await as(h.app, 'a.b.c', me));
    expectUnauthorized(await as(h.app, 'ap_live_00000000000000000000000000000000', me));
  });

  it('for an expired token, a bad signature, a wrong issuer or audience', async () => {
    const account = await newAccount(h.app);
    expectUnauthorized(await as(h.app, await h.identity.mintToken({ sub: account.userId, expiresIn: -60 }), me), /expired/);
    const [header, payload] = account.token.split('.');
    expectUnauthorized(await as(h.app, `${header}.${payload}.${'A'.repeat(86)}`, me));
    const forger = await newSigningKey(h.identity.keys[0]?.kid);
    expectUnauthorized(await as(h.app, await h.identity.mintToken({ sub: account.userId, key: forger }), me));
    expectUnauthorized(await as(h.app, await h.identity.mintToken({ sub: account.userId, iss: 'someone-else' }), me));
    expectUnauthorized(await as(h.app, await h.identity.mintToken({ sub: account.userId, aud: 'another-api' }), me));
  });

  it('for a user who is gone or inactive', async () => {
    const account = await newAccount(h.app);
    const user = h.identity.model.users.get(account.userId);
    if (user) user.isActive = false;
    // A token for a tenant not yet cached, so identity is asked.
    expectUnauthorized(await as(h.app, account.token, { ...credits, query: { tenant_id: account.tenantId } }));
  });

  it('for a revoked key, at once, and for an expired key despite the cache', async () => {
    const account = await newAccount(h.app);
    const revoked = await newApiKey(h.app, account, ['billing:read']);
    expect((await as(h.app, revoked.key, credits)).statusCode).toBe(200);
    await as(h.app, account.token, { method: 'DELETE', url: `/api/v1/auth/api-keys/${revoked.id}` });
    expectUnauthorized(await as(h.app, revoked.key, credits));

    const expiring = await newApiKey(h.app, account, ['billing:read'], { expires_at: new Date(Date.now() + 800).toISOString() });
    expect((await as(h.app, expiring.key, credits)).statusCode).toBe(200);
    const asked = h.identity.callsOf('authenticateApiKey').length;
    await new Promise((resolve) => setTimeout(resolve, 900));
    expectUnauthorized(await as(h.app, expiring.key, credits), /expired/);
    expect(h.identity.callsOf('authenticateApiKey')).toHaveLength(asked);
  });

  it('for a reused refresh token', async () => {
    const account = await newAccount(h.app);
    expect((await h.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refresh_token: account.refreshToken } })).statusCode).toBe(200);
    expectUnauthorized(await h.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refresh_token: account.refreshToken } }));
  });

  it('answers a wrong password and an unknown e-mail alike', async () => {
    const account = await newAccount(h.app);
    const wrong = await h.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: account.email, password: 'not it' } });
    const unknown = await h.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: 'nobody@example.com', password: 'not it' } });
    expectUnauthorized(wrong);
    expectUnauthorized(unknown);
    expect(wrong.json<{ message: string }>().message).toBe(unknown.json<{ message: string }>().message);
  });
});

describe('signing keys', () => {
  it('refetches the JWK set when a token names an unknown kid (key rotation)', async () => {
    const account = await newAccount(h.app);
    expect((await as(h.app, account.token, me)).statusCode).toBe(200);
    const fetches = h.identity.callsOf('getJwks').length;
    h.identity.keys = [await newSigningKey(), ...h.identity.keys];
    const rotated = await h.identity.mintToken({ sub: account.userId });
    expect((await as(h.app, rotated, me)).statusCode).toBe(200);
    expect(h.identity.callsOf('getJwks')).toHaveLength(fetches + 1);
    // Known kids need no fetch.
    expect((await as(h.app, account.token, me)).statusCode).toBe(200);
    expect(h.identity.callsOf('getJwks')).toHaveLength(fetches + 1);
  });

  it('throttles refetches for unknown kids', async () => {
    const throttled = await startHarness({ JWKS_REFRESH_MIN_INTERVAL_MS: '60000' });
    try {
      const account = await newAccount(throttled.app);
      expect((await as(throttled.app, account.token, me)).statusCode).toBe(200);
      const fetches = throttled.identity.callsOf('getJwks').length;
      const stranger = await newSigningKey();
      for (let n = 0; n < 3; n += 1) {
        expectUnauthorized(await as(throttled.app, await throttled.identity.mintToken({ sub: account.userId, key: stranger }), me), /unknown key/);
      }
      expect(throttled.identity.callsOf('getJwks')).toHaveLength(fetches);
    } finally {
      await throttled.close();
    }
  });
});

describe('403 forbidden', () => {
  it('when a key lacks the scope; * grants every scope', async () => {
    const account = await newAccount(h.app);
    expectForbidden(await as(h.app, (await newApiKey(h.app, account, ['agents:read'])).key, credits));
    expect((await as(h.app, (await newApiKey(h.app, account, ['*'])).key, credits)).statusCode).toBe(200);
    expect((await as(h.app, (await newApiKey(h.app, account, ['billing:read'])).key, { method: 'GET', url: '/api/v1/billing/transactions' })).statusCode).toBe(200);
  });

  it('when an API key is used on a user-only route, whatever its scopes', async () => {
    const account = await newAccount(h.app);
    const key = (await newApiKey(h.app, account, ['*'])).key;
    const owner = account.tenantId;
    const routes = [
      { method: 'POST' as const, url: '/api/v1/auth/api-keys', payload: { name: 'minted', scopes: ['agents:read'] } },
      { method: 'GET' as const, url: '/api/v1/auth/api-keys' },
      { method: 'DELETE' as const, url: '/api/v1/auth/api-keys/key_x' },
      { method: 'POST' as const, url: '/api/v1/billing/purchases', payload: { credits: 10 } },
      { method: 'GET' as const, url: `/api/v1/tenants/${owner}/members` },
      { method: 'POST' as const, url: `/api/v1/tenants/${owner}/members`, payload: { email: 'x@example.com', role: 'member' } },
      { method: 'PATCH' as const, url: `/api/v1/tenants/${owner}/members/usr_x`, payload: { role: 'member' } },
      { method: 'DELETE' as const, url: `/api/v1/tenants/${owner}/members/usr_x` },
    ];
    for (const route of routes) expectForbidden(await as(h.app, key, route));
    expect(h.identity.callsOf('createPurchase')).toHaveLength(0);
  });

  it('when the role is too low', async () => {
    const owner = await newAccount(h.app);
    const viewer = await newAccount(h.app);
    await addMember(h.app, owner, viewer, 'viewer');
    const query = { tenant_id: owner.tenantId };
    expect((await as(h.app, viewer.token, { ...credits, query })).statusCode).toBe(200);
    expectForbidden(await as(h.app, viewer.token, { method: 'POST', url: '/api/v1/billing/purchases', query, payload: { credits: 10 } }));
    expectForbidden(await as(h.app, viewer.token, { method: 'POST', url: '/api/v1/auth/api-keys', query, payload: { name: 'k', scopes: ['agents:read'] } }));
    expectForbidden(await as(h.app, viewer.token, { method: 'GET', url: `/api/v1/tenants/${owner.tenantId}/members` }));
    const admin = await newAccount(h.app);
    await addMember(h.app, owner, admin, 'admin');
    expect((await as(h.app, admin.token, { method: 'GET', url: '/api/v1/auth/api-keys', query })).statusCode).toBe(200);
    expectForbidden(await as(h.app, admin.token, { method: 'POST', url: '/api/v1/billing/purchases', query, payload: { credits: 10 } }));
  });

  it("for another tenant's tenant_id, by token, by key and in the members path", async () => {
    const alice = await newAccount(h.app);
    const bob = await newAccount(h.app);
    expectForbidden(await as(h.app, alice.token, { ...credits, query: { tenant_id: bob.tenantId } }));
    expectForbidden(await as(h.app, alice.token, { method: 'GET', url: `/api/v1/tenants/${bob.tenantId}/members` }));
    const key = (await newApiKey(h.app, alice, ['billing:read'])).key;
    expectForbidden(await as(h.app, key, { ...credits, query: { tenant_id: bob.tenantId } }));
    expect((await as(h.app, key, { ...credits, query: { tenant_id: alice.tenantId } })).statusCode).toBe(200);
  });

  it('keeps each tenant to its own data', async () => {
    const alice = await newAccount(h.app);
    const bob = await newAccount(h.app);
    await as(h.app, alice.token, { method: 'POST', url: '/api/v1/billing/purchases', payload: { credits: 123 } });
    await newApiKey(h.app, alice, ['agents:read']);
    expect((await as(h.app, bob.token, credits)).json()).toMatchObject({ balance: 1000 });
    expect((await as(h.app, bob.token, { method: 'GET', url: '/api/v1/auth/api-keys' })).json()).toMatchObject({ total: 0 });
  });
});
