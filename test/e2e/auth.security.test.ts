import { describe, expect, it, vi } from 'vitest';
import { Api, exhaustibleTestIp, PASSWORD, newAccount, newApiKey, uniqueEmail } from './harness/client.js';
import { expectError, expectStatus, headersOf, statusOf, type Answer } from './harness/results.js';

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

function expectUnauthorized(answer: Answer): void {
  expectError(answer, 401, 'unauthorized');
  expect(headersOf(answer).get('www-authenticate')).toMatch(/^Bearer/);
}

describe('401 unauthorized', () => {
  it('without a credential, with garbage, with a forged token and with a malformed header', async () => {
    const api = new Api();
    expectUnauthorized(await api.anonymous.GET('/api/v1/auth/me'));
    expectUnauthorized(await api.withToken('garbage').GET('/api/v1/auth/me'));
    expectUnauthorized(await api.withKey('ap_live_00000000000000000000000000000000').GET('/api/v1/auth/me'));
    const account = await newAccount(api);
    const [header, payload] = account.accessToken.split('.');
    expectUnauthorized(await api.withToken(`${header}.${payload}.${'A'.repeat(86)}`).GET('/api/v1/auth/me'));
    // Raw: a scheme other than the contract's Bearer.
    expectUnauthorized(await api.get('/api/v1/auth/me', { headers: { authorization: `Basic ${account.accessToken}` } }));
  });

  it('for a wrong password and an unknown e-mail alike', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const wrong = await api.anonymous.POST('/api/v1/auth/login', { body: { username: account.email, password: 'not the password' }, headers: FORM });
    const unknown = await api.anonymous.POST('/api/v1/auth/login', { body: { username: uniqueEmail(), password: PASSWORD }, headers: FORM });
    expectUnauthorized(wrong);
    expectUnauthorized(unknown);
    expect(wrong.error?.message).toBe(unknown.error?.message);
  });

  it('for a revoked key and an expired key', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const revoked = await newApiKey(api, account, ['billing:read']);
    expect(await statusOf(revoked.client.GET('/api/v1/billing/credits'))).toBe(200);
    expectStatus(await account.client.DELETE('/api/v1/auth/api-keys/{key_id}', { params: { path: { key_id: revoked.id } } }));
    expectUnauthorized(await revoked.client.GET('/api/v1/billing/credits'));

    const expiresAt = Date.now() + 1_500;
    const expiring = await newApiKey(api, account, ['billing:read'], { expires_at: new Date(expiresAt).toISOString() });
    expect(await statusOf(expiring.client.GET('/api/v1/billing/credits'))).toBe(200);
    // The platform runs in other processes on the real clock: the test asks until the key is refused.
    const refusedAt = await vi.waitFor(
      async () => {
        expect(await statusOf(expiring.client.GET('/api/v1/billing/credits'))).toBe(401);
        return Date.now();
      },
      { timeout: 10_000, interval: 200 },
    );
    expect(refusedAt).toBeGreaterThanOrEqual(expiresAt);
    expectUnauthorized(await expiring.client.GET('/api/v1/billing/credits'));
  });

  it('for a reused refresh token, which also revokes the tokens issued after it', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const refresh = (refresh_token: string) => api.anonymous.POST('/api/v1/auth/refresh', { body: { refresh_token } });
    const first = expectStatus(await refresh(account.refreshToken));
    expectUnauthorized(await refresh(account.refreshToken));
    expectUnauthorized(await refresh(first.refresh_token));
    expectUnauthorized(await refresh('rtk_not-a-token'));
  });
});

describe('403 forbidden', () => {
  it('when an API key lacks the scope', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const key = await newApiKey(api, account, ['agents:read']);
    expectError(await key.client.GET('/api/v1/billing/credits'), 403, 'forbidden');
    const everything = await newApiKey(api, account, ['*']);
    expect(await statusOf(everything.client.GET('/api/v1/billing/credits'))).toBe(200);
  });

  it('when an API key is used where only users may act', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const { client } = await newApiKey(api, account, ['*']);
    expectError(await client.POST('/api/v1/auth/api-keys', { body: { name: 'minted', scopes: ['agents:read'] } }), 403, 'forbidden');
    expectError(await client.GET('/api/v1/auth/api-keys'), 403, 'forbidden');
    expectError(await client.POST('/api/v1/billing/purchases', { body: { credits: 10 } }), 403, 'forbidden');
  });

  it('when the role is too low', async () => {
    const api = new Api();
    const owner = await newAccount(api);
    const viewer = await newAccount(api);
    const members = { params: { path: { tenant_id: owner.tenantId } } };
    expectStatus(await owner.client.POST('/api/v1/tenants/{tenant_id}/members', { ...members, body: { email: viewer.email, role: 'viewer' } }), 201);
    const inOwnersTenant = { params: { query: { tenant_id: owner.tenantId } } };
    expect(await statusOf(viewer.client.GET('/api/v1/billing/credits', inOwnersTenant))).toBe(200);
    expectError(await viewer.client.POST('/api/v1/billing/purchases', { ...inOwnersTenant, body: { credits: 10 } }), 403, 'forbidden');
    const newKey = () => viewer.client.POST('/api/v1/auth/api-keys', { ...inOwnersTenant, body: { name: 'k', scopes: ['agents:read'] } });
    expectError(await newKey(), 403, 'forbidden');

    // A role change takes effect for tokens already issued.
    const promoted = await owner.client.PATCH('/api/v1/tenants/{tenant_id}/members/{user_id}', {
      params: { path: { tenant_id: owner.tenantId, user_id: viewer.userId } },
      body: { role: 'admin' },
    });
    expectStatus(promoted);
    expectStatus(await newKey(), 201);
    expectError(await viewer.client.POST('/api/v1/billing/purchases', { ...inOwnersTenant, body: { credits: 10 } }), 403, 'forbidden');
  });

  it('for a tenant_id the caller is not a member of, by token or by key', async () => {
    const api = new Api();
    const alice = await newAccount(api);
    const bob = await newAccount(api);
    const inTenant = (tenant_id: string) => ({ params: { query: { tenant_id } } });
    expectError(await alice.client.GET('/api/v1/billing/credits', inTenant(bob.tenantId)), 403, 'forbidden');
    const key = await newApiKey(api, alice, ['billing:read']);
    expectError(await key.client.GET('/api/v1/billing/credits', inTenant(bob.tenantId)), 403, 'forbidden');
    expect(await statusOf(key.client.GET('/api/v1/billing/credits', inTenant(alice.tenantId)))).toBe(200);
  });

  it('keeps each tenant to its own data', async () => {
    const api = new Api();
    const alice = await newAccount(api);
    const bob = await newAccount(api);
    expectStatus(await alice.client.POST('/api/v1/billing/purchases', { body: { credits: 123 } }), 201);
    await newApiKey(api, alice, ['agents:read']);
    expect(expectStatus(await bob.client.GET('/api/v1/billing/credits')).balance).toBe(1000);
    expect(expectStatus(await bob.client.GET('/api/v1/auth/api-keys')).total).toBe(0);
    expect(expectStatus(await bob.client.GET('/api/v1/billing/transactions')).total).toBe(1);
  });
});

describe('429 rate limits', () => {
  it("stops a tenant after its plan's per-minute limit, with the headers", async () => {
    const api = new Api();
    const account = await newAccount(api);
    const me = () => account.client.GET('/api/v1/auth/me');
    let last = await me();
    // Windows are fixed minutes: start over in a fresh one if this one is about to roll over.
    const secondsLeft = Number(last.response.headers.get('x-ratelimit-reset')) - Date.now() / 1000;
    if (secondsLeft < 5) {
      // Real time: the limiter's windows are minutes of the gateway's wall clock, in another
      // process; only waiting for the next one starts a fresh count.
      await new Promise((resolve) => setTimeout(resolve, (secondsLeft + 0.2) * 1000));
      last = await me();
    }
    const remainingAtStart = Number(last.response.headers.get('x-ratelimit-remaining'));
    let served = 1;
    while (last.response.status === 200 && served < 100) {
      last = await me();
      served += 1;
    }
    expect(served).toBe(remainingAtStart + 2);
    const limited = expectError(last, 429, 'rate_limit_exceeded');
    const retryAfter = limited.retry_after;
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(last.response.headers.get('retry-after')).toBe(String(retryAfter));
    expect(last.response.headers.get('x-ratelimit-limit')).toBe('60');
    expect(last.response.headers.get('x-ratelimit-remaining')).toBe('0');

    // Another tenant is unaffected: limits are per tenant.
    const other = await newAccount(api);
    expect(await statusOf(other.client.GET('/api/v1/auth/me'))).toBe(200);
  });

  it('limits failed logins per e-mail', async () => {
    const account = await newAccount(new Api());
    // Each attempt from another client IP: the limit is the e-mail's.
    const login = (password: string) => new Api().anonymous.POST('/api/v1/auth/login', { body: { username: account.email, password }, headers: FORM });
    for (let attempt = 0; attempt < 10; attempt += 1) {
      expect(await statusOf(login('wrong password'))).toBe(401);
    }
    expectError(await login(account.password), 429, 'rate_limit_exceeded');
  });

  it('limits unauthenticated auth calls per client IP', async () => {
    const api = new Api(undefined, exhaustibleTestIp());
    const refresh = (from: Api) => from.anonymous.POST('/api/v1/auth/refresh', { body: { refresh_token: 'rtk_nothing' } });
    let last: { response: Response } = await api.anonymous.POST('/api/v1/auth/login', { body: { username: uniqueEmail(), password: PASSWORD }, headers: FORM });
    let calls = 1;
    while (last.response.status !== 429 && calls < 400) {
      last = await refresh(api);
      calls += 1;
    }
    expect(last.response.status).toBe(429);
    expect(calls).toBeGreaterThan(300);
    expect(last.response.headers.get('retry-after')).toMatch(/^\d+$/);
    // A client at another address is not limited.
    expect(await statusOf(refresh(new Api()))).toBe(401);
  });
});
