import { describe, expect, it } from 'vitest';
import { Api, PASSWORD, newAccount, newApiKey, uniqueEmail } from './harness/client.js';

function expectUnauthorized(response: { status: number; headers: Headers; body: unknown }): void {
  expect(response.status, JSON.stringify(response.body)).toBe(401);
  expect(response.body).toMatchObject({ error: 'unauthorized' });
  expect(response.headers.get('www-authenticate')).toMatch(/^Bearer/);
}

function expectForbidden(response: { status: number; body: unknown }): void {
  expect(response.status, JSON.stringify(response.body)).toBe(403);
  expect(response.body).toMatchObject({ error: 'forbidden' });
}

describe('401 unauthorized', () => {
  it('without a credential, with garbage, with a forged token and with a malformed header', async () => {
    const api = new Api();
    expectUnauthorized(await api.get('/api/v1/auth/me'));
    expectUnauthorized(await api.get('/api/v1/auth/me', { token: 'garbage' }));
    expectUnauthorized(await api.get('/api/v1/auth/me', { token: 'ap_live_00000000000000000000000000000000' }));
    const account = await newAccount(api);
    const [header, payload] = account.accessToken.split('.');
    expectUnauthorized(await api.get('/api/v1/auth/me', { token: `${header}.${payload}.${'A'.repeat(86)}` }));
    expectUnauthorized(await api.get('/api/v1/auth/me', { headers: { authorization: `Basic ${account.accessToken}` } }));
  });

  it('for a wrong password and an unknown e-mail alike', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const wrong = await api.post('/api/v1/auth/login', { form: { username: account.email, password: 'not the password' } });
    const unknown = await api.post('/api/v1/auth/login', { form: { username: uniqueEmail(), password: PASSWORD } });
    expectUnauthorized(wrong);
    expectUnauthorized(unknown);
    expect((wrong.body as { message: string }).message).toBe((unknown.body as { message: string }).message);
  });

  it('for a revoked key and an expired key', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const revoked = await newApiKey(api, account, ['billing:read']);
    expect((await api.get('/api/v1/billing/credits', { token: revoked.key })).status).toBe(200);
    await api.delete(`/api/v1/auth/api-keys/${revoked.id}`, { token: account.accessToken });
    expectUnauthorized(await api.get('/api/v1/billing/credits', { token: revoked.key }));

    const expiring = await newApiKey(api, account, ['billing:read'], { expires_at: new Date(Date.now() + 1_500).toISOString() });
    expect((await api.get('/api/v1/billing/credits', { token: expiring.key })).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expectUnauthorized(await api.get('/api/v1/billing/credits', { token: expiring.key }));
  });

  it('for a reused refresh token, which also revokes the tokens issued after it', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const first = await api.post<{ refresh_token: string }>('/api/v1/auth/refresh', { json: { refresh_token: account.refreshToken } });
    expect(first.status).toBe(200);
    expectUnauthorized(await api.post('/api/v1/auth/refresh', { json: { refresh_token: account.refreshToken } }));
    expectUnauthorized(await api.post('/api/v1/auth/refresh', { json: { refresh_token: first.body.refresh_token } }));
    expectUnauthorized(await api.post('/api/v1/auth/refresh', { json: { refresh_token: 'rtk_not-a-token' } }));
  });
});

describe('403 forbidden', () => {
  it('when an API key lacks the scope', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const key = await newApiKey(api, account, ['agents:read']);
    expectForbidden(await api.get('/api/v1/billing/credits', { token: key.key }));
    const everything = await newApiKey(api, account, ['*']);
    expect((await api.get('/api/v1/billing/credits', { token: everything.key })).status).toBe(200);
  });

  it('when an API key is used where only users may act', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const key = await newApiKey(api, account, ['*']);
    expectForbidden(await api.post('/api/v1/auth/api-keys', { token: key.key, json: { name: 'minted', scopes: ['agents:read'] } }));
    expectForbidden(await api.get('/api/v1/auth/api-keys', { token: key.key }));
    expectForbidden(await api.post('/api/v1/billing/purchases', { token: key.key, json: { credits: 10 } }));
  });

  it('when the role is too low', async () => {
    const api = new Api();
    const owner = await newAccount(api);
    const viewer = await newAccount(api);
    const added = await api.post(`/api/v1/tenants/${owner.tenantId}/members`, { token: owner.accessToken, json: { email: viewer.email, role: 'viewer' } });
    expect(added.status).toBe(201);
    const inOwnersTenant = { token: viewer.accessToken, query: { tenant_id: owner.tenantId } };
    expect((await api.get('/api/v1/billing/credits', inOwnersTenant)).status).toBe(200);
    expectForbidden(await api.post('/api/v1/billing/purchases', { ...inOwnersTenant, json: { credits: 10 } }));
    expectForbidden(await api.post('/api/v1/auth/api-keys', { ...inOwnersTenant, json: { name: 'k', scopes: ['agents:read'] } }));

    // A role change takes effect for tokens already issued.
    const promoted = await api.patch(`/api/v1/tenants/${owner.tenantId}/members/${viewer.userId}`, { token: owner.accessToken, json: { role: 'admin' } });
    expect(promoted.status).toBe(200);
    expect((await api.post('/api/v1/auth/api-keys', { ...inOwnersTenant, json: { name: 'k', scopes: ['agents:read'] } })).status).toBe(201);
    expectForbidden(await api.post('/api/v1/billing/purchases', { ...inOwnersTenant, json: { credits: 10 } }));
  });

  it('for a tenant_id the caller is not a member of, by token or by key', async () => {
    const api = new Api();
    const alice = await newAccount(api);
    const bob = await newAccount(api);
    expectForbidden(await api.get('/api/v1/billing/credits', { token: alice.accessToken, query: { tenant_id: bob.tenantId } }));
    const key = await newApiKey(api, alice, ['billing:read']);
    expectForbidden(await api.get('/api/v1/billing/credits', { token: key.key, query: { tenant_id: bob.tenantId } }));
    expect((await api.get('/api/v1/billing/credits', { token: key.key, query: { tenant_id: alice.tenantId } })).status).toBe(200);
  });

  it('keeps each tenant to its own data', async () => {
    const api = new Api();
    const alice = await newAccount(api);
    const bob = await newAccount(api);
    await api.post('/api/v1/billing/purchases', { token: alice.accessToken, json: { credits: 123 } });
    await newApiKey(api, alice, ['agents:read']);
    const bobsCredits = await api.get('/api/v1/billing/credits', { token: bob.accessToken });
    expect(bobsCredits.body.balance).toBe(1000);
    const bobsKeys = await api.get('/api/v1/auth/api-keys', { token: bob.accessToken });
    expect(bobsKeys.body.total).toBe(0);
    const bobsLedger = await api.get('/api/v1/billing/transactions', { token: bob.accessToken });
    expect(bobsLedger.body.total).toBe(1);
  });
});

describe('429 rate limits', () => {
  it("stops a tenant after its plan's per-minute limit, with the headers", async () => {
    const api = new Api();
    const account = await newAccount(api);
    let last = await api.get('/api/v1/auth/me', { token: account.accessToken });
    // Windows are fixed minutes: start over in a fresh one if this one is about to roll over.
    const secondsLeft = Number(last.headers.get('x-ratelimit-reset')) - Date.now() / 1000;
    if (secondsLeft < 5) {
      await new Promise((resolve) => setTimeout(resolve, (secondsLeft + 0.2) * 1000));
      last = await api.get('/api/v1/auth/me', { token: account.accessToken });
    }
    const remainingAtStart = Number(last.headers.get('x-ratelimit-remaining'));
    let served = 1;
    while (last.status === 200 && served < 100) {
      last = await api.get('/api/v1/auth/me', { token: account.accessToken });
      served += 1;
    }
    expect(served).toBe(remainingAtStart + 2);
    expect(last.status).toBe(429);
    expect(last.body).toMatchObject({ error: 'rate_limit_exceeded', retry_after: expect.any(Number) });
    const retryAfter = (last.body as { retry_after: number }).retry_after;
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(last.headers.get('retry-after')).toBe(String(retryAfter));
    expect(last.headers.get('x-ratelimit-limit')).toBe('60');
    expect(last.headers.get('x-ratelimit-remaining')).toBe('0');

    // Another tenant is unaffected: limits are per tenant.
    const other = await newAccount(api);
    expect((await api.get('/api/v1/auth/me', { token: other.accessToken })).status).toBe(200);
  });

  it('limits failed logins per e-mail', async () => {
    const api = new Api();
    const account = await newAccount(api);
    for (let attempt = 0; attempt < 10; attempt += 1) {
      const failed = await new Api().post('/api/v1/auth/login', { form: { username: account.email, password: 'wrong password' } });
      expect(failed.status).toBe(401);
    }
    const blocked = await new Api().post('/api/v1/auth/login', { form: { username: account.email, password: account.password } });
    expect(blocked.status).toBe(429);
    expect(blocked.body).toMatchObject({ error: 'rate_limit_exceeded' });
  });

  it('limits unauthenticated auth calls per client IP', async () => {
    const api = new Api();
    let last = await api.post('/api/v1/auth/login', { form: { username: uniqueEmail(), password: PASSWORD } });
    let calls = 1;
    while (last.status !== 429 && calls < 400) {
      last = await api.post('/api/v1/auth/refresh', { json: { refresh_token: 'rtk_nothing' } });
      calls += 1;
    }
    expect(last.status).toBe(429);
    expect(calls).toBeGreaterThan(300);
    expect(last.headers.get('retry-after')).toMatch(/^\d+$/);
    // A client at another address is not limited.
    expect((await new Api().post('/api/v1/auth/refresh', { json: { refresh_token: 'rtk_nothing' } })).status).toBe(401);
  });
});
