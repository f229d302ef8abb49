import type { LightMyRequestResponse } from 'fastify';
import { decodeJwt, decodeProtectedHeader, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, as, newAccount, newApiKey, startHarness, type Harness } from '../support/harness.js';
import { deactivateUser, deleteUser } from '../support/identity-database.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

/** A real token's header and claims (`overrides` changing some), signed with a key of ours instead of identity's. */
async function forge(token: string, overrides: { claims?: Record<string, unknown>; kid?: string } = {}): Promise<string> {
  const { privateKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
  const header = decodeProtectedHeader(token);
  return new SignJWT({ ...decodeJwt(token), ...overrides.claims })
    .setProtectedHeader({ ...header, alg: 'EdDSA', kid: overrides.kid ?? header.kid })
    .sign(privateKey);
}

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

  it('for a bad signature, and for a token signed by another key under the real kid', async () => {
    const account = await newAccount(h.app);
    const [header, payload] = account.token.split('.');
    expectUnauthorized(await as(h.app, `${header}.${payload}.${'A'.repeat(86)}`, me));
    expectUnauthorized(await as(h.app, await forge(account.token), me), /invalid/);
    expectUnauthorized(await as(h.app, await forge(account.token, { claims: { sub: (await newAccount(h.app)).userId } }), me), /invalid/);
    // The genuine token still works: the forgeries were refused for their signatures alone.
    expect((await as(h.app, account.token, me)).statusCode).toBe(200);
  });

  it('for a user deactivated or deleted in identity, once their membership is asked again', async () => {
    const inactive = await newAccount(h.app);
    const gone = await newAccount(h.app);
    expect((await as(h.app, inactive.token, credits)).statusCode).toBe(200);
    await deactivateUser(h, inactive.userId);
    await deleteUser(h, gone.userId);
    // A tenant not yet cached for this user, so identity is asked.
    expectUnauthorized(await as(h.app, inactive.token, { ...credits, query: { tenant_id: inactive.tenantId } }), /deactivated/);
    expectUnauthorized(await as(h.app, gone.token, credits), /no longer exists/);
  });

  it('for a revoked key, at once, and for an expired key despite the cache', async () => {
    const account = await newAccount(h.app);
    const revoked = await newApiKey(h.app, account, ['billing:read']);
    expect((await as(h.app, revoked.key, credits)).statusCode).toBe(200);
    await as(h.app, account.token, { method: 'DELETE', url: `/api/v1/auth/api-keys/${revoked.id}` });
    expectUnauthorized(await as(h.app, revoked.key, credits));

    // Identity judges expiry by its own clock when the key is first used: leave it time for that.
    const expiring = await newApiKey(h.app, account, ['billing:read'], { expires_at: new Date(Date.now() + 5_000).toISOString() });
    expect((await as(h.app, expiring.key, credits)).statusCode).toBe(200);
    const asked = h.identity.callsOf('AuthenticateApiKey').length;
    h.clock.advance(6_000);
    expectUnauthorized(await as(h.app, expiring.key, credits), /expired/);
    expect(h.identity.callsOf('AuthenticateApiKey')).toHaveLength(asked);
  });

  it('for a reused refresh token, which revokes the newest token of its family too', async () => {
    const account = await newAccount(h.app);
    const refresh = (token: string) => h.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refresh_token: token } });
    const rotated = await refresh(account.refreshToken);
    expect(rotated.statusCode).toBe(200);
    expectUnauthorized(await refresh(account.refreshToken));
    // decisions §3: a replayed token means it leaked, so its whole family is revoked.
    expectUnauthorized(await refresh(rotated.json<{ refresh_token: string }>().refresh_token));
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
  // Rotation and the refetch throttle are the verifier's own: src/auth/access-tokens.test.ts.
  it('refuses a token under a kid identity does not publish, after asking identity for its current set', async () => {
    const account = await newAccount(h.app);
    expect((await as(h.app, account.token, me)).statusCode).toBe(200);
    const fetches = h.identity.callsOf('GetJwks').length;
    expectUnauthorized(await as(h.app, await forge(account.token, { kid: 'sgk_01HZZZZZZZZZZZZZZZZZZZZZZZ' }), me), /unknown key/);
    expect(h.identity.callsOf('GetJwks')).toHaveLength(fetches + 1);
    // Known kids need no fetch, whatever their signature.
    expectUnauthorized(await as(h.app, await forge(account.token), me));
    expect((await as(h.app, account.token, me)).statusCode).toBe(200);
    expect(h.identity.callsOf('GetJwks')).toHaveLength(fetches + 1);
  });
});

// The access token's lifetime is identity's (ACCESS_TOKEN_TTL_SECONDS); the gateway's clock is
// moved past it, which would expire every token issued after it too: a platform of its own.
describe('an expired access token', () => {
  let later: Harness;
  beforeAll(async () => {
    later = await startHarness();
  });
  afterAll(async () => {
    await later.close();
  });

  it('is refused once the gateway clock passes its exp', async () => {
    const account = await newAccount(later.app);
    const { exp = 0, iat = 0 } = decodeJwt(account.token);
    expect(exp - iat).toBe(3600);
    later.clock.advance(exp * 1000 - later.clock.now() - 5_000);
    expect((await as(later.app, account.token, me)).statusCode).toBe(200);
    later.clock.advance(5_000);
    expectUnauthorized(await as(later.app, account.token, me), /expired/);
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
    expect(h.identity.callsOf('CreatePurchase')).toHaveLength(0);
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
