import { describe, expect, it } from 'vitest';
import { Api, ISO_MS, PASSWORD, id, newAccount, newApiKey, uniqueEmail } from './harness/client.js';

describe('registration and login', () => {
  it('registers a user with a tenant and the welcome credits', async () => {
    const api = new Api();
    const email = uniqueEmail('Mixed.Case');
    const response = await api.post('/api/v1/auth/register', {
      json: { email: email.toUpperCase(), password: PASSWORD, full_name: 'Ada Lovelace', company: 'Analytical Engines' },
    });
    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      id: expect.stringMatching(id('usr')),
      email: email.toLowerCase(),
      full_name: 'Ada Lovelace',
      tenant_id: expect.stringMatching(id('tnt')),
      credits: 1000,
      created_at: expect.stringMatching(ISO_MS),
    });
  });

  it('logs in with a form body and with JSON', async () => {
    const api = new Api();
    const email = uniqueEmail();
    await api.post('/api/v1/auth/register', { json: { email, password: PASSWORD } });
    const form = await api.post('/api/v1/auth/login', { form: { username: email, password: PASSWORD } });
    expect(form.status).toBe(200);
    expect(form.body).toEqual({
      access_token: expect.stringMatching(/^[\w-]+\.[\w-]+\.[\w-]+$/),
      token_type: 'bearer',
      expires_in: 3600,
      refresh_token: expect.any(String),
      refresh_expires_in: 2592000,
    });
    const json = await api.post('/api/v1/auth/login', { json: { username: email, password: PASSWORD } });
    expect(json.status).toBe(200);
    expect(json.body.access_token).not.toBe(form.body.access_token);
  });

  it('shows the current user with the tenant membership', async () => {
    const api = new Api();
    const account = await newAccount(api, { full_name: 'Grace Hopper' });
    const me = await api.get('/api/v1/auth/me', { token: account.accessToken });
    expect(me.status).toBe(200);
    expect(me.body).toEqual({
      id: account.userId,
      email: account.email,
      full_name: 'Grace Hopper',
      is_active: true,
      created_at: expect.stringMatching(ISO_MS),
      tenants: [{ id: account.tenantId, name: "Grace Hopper's workspace", role: 'owner' }],
    });
  });

  it('rotates refresh tokens', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const refreshed = await api.post('/api/v1/auth/refresh', { json: { refresh_token: account.refreshToken } });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body).toEqual({
      access_token: expect.any(String),
      token_type: 'bearer',
      expires_in: 3600,
      refresh_token: expect.any(String),
      refresh_expires_in: 2592000,
    });
    expect(refreshed.body.refresh_token).not.toBe(account.refreshToken);
    const me = await api.get('/api/v1/auth/me', { token: refreshed.body.access_token as string });
    expect(me.status).toBe(200);
    const again = await api.post('/api/v1/auth/refresh', { json: { refresh_token: refreshed.body.refresh_token } });
    expect(again.status).toBe(200);
  });

  it('serves the same operations under the /v1 alias', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const me = await api.get('/v1/auth/me', { token: account.accessToken });
    expect(me.status).toBe(200);
    expect(me.body.id).toBe(account.userId);
  });
});

describe('API keys', () => {
  it('creates a key whose secret is shown once, lists it by prefix and authenticates with it', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
    const created = await api.post('/api/v1/auth/api-keys', {
      token: account.accessToken,
      json: { name: 'ci deploys', scopes: ['agents:read', 'billing:read'], expires_at: expiresAt },
    });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(id('key')),
      name: 'ci deploys',
      key: expect.stringMatching(/^ap_live_[0-9A-Za-z]{32}$/),
      key_prefix: (created.body.key as string).slice(0, 12),
      scopes: ['agents:read', 'billing:read'],
      created_at: expect.stringMatching(ISO_MS),
      expires_at: expiresAt,
    });

    const listed = await api.get('/api/v1/auth/api-keys', { token: account.accessToken });
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual({
      items: [
        {
          id: created.body.id,
          name: 'ci deploys',
          key_prefix: (created.body.key as string).slice(0, 12),
          scopes: ['agents:read', 'billing:read'],
          last_used_at: null,
          created_at: created.body.created_at,
          expires_at: expiresAt,
        },
      ],
      total: 1,
      page: 1,
      per_page: 20,
    });
    expect(JSON.stringify(listed.body)).not.toContain(created.body.key);

    const withKey = await api.get('/api/v1/billing/credits', { token: created.body.key as string });
    expect(withKey.status).toBe(200);
    expect(withKey.body).toEqual({ balance: 1000, threshold: 100, plan: 'free' });

    const afterUse = await api.get<{ items: { last_used_at: string | null }[] }>('/api/v1/auth/api-keys', { token: account.accessToken });
    expect(afterUse.body.items[0]?.last_used_at).toMatch(ISO_MS);
  });

  it('revokes a key', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const key = await newApiKey(api, account, ['billing:read']);
    expect((await api.get('/api/v1/billing/credits', { token: key.key })).status).toBe(200);
    const revoked = await api.delete(`/api/v1/auth/api-keys/${key.id}`, { token: account.accessToken });
    expect(revoked.status).toBe(200);
    expect(revoked.body).toEqual({ success: true, message: expect.any(String) });
    expect((await api.get('/api/v1/billing/credits', { token: key.key })).status).toBe(401);
    const listed = await api.get('/api/v1/auth/api-keys', { token: account.accessToken });
    expect(listed.body).toMatchObject({ items: [], total: 0 });
  });

  it('pages the key list newest first', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const keys = [];
    for (let n = 0; n < 3; n += 1) keys.push(await newApiKey(api, account, ['agents:read']));
    const page = await api.get<{ items: { id: string }[] }>('/api/v1/auth/api-keys', { token: account.accessToken, query: { page: 2, per_page: 2 } });
    expect(page.status).toBe(200);
    expect(page.body).toMatchObject({ total: 3, page: 2, per_page: 2 });
    expect(page.body.items.map((item) => item.id)).toEqual([keys[0]?.id]);
  });
});

describe('billing', () => {
  it('shows credits, buys credits and lists the ledger newest first', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const credits = await api.get('/api/v1/billing/credits', { token: account.accessToken });
    expect(credits.body).toEqual({ balance: 1000, threshold: 100, plan: 'free' });

    const purchase = await api.post('/api/v1/billing/purchases', { token: account.accessToken, json: { credits: 500 } });
    expect(purchase.status).toBe(201);
    expect(purchase.body).toEqual({
      id: expect.any(String),
      credits: 500,
      status: 'completed',
      balance: 1500,
      created_at: expect.stringMatching(ISO_MS),
    });

    const ledger = await api.get('/api/v1/billing/transactions', { token: account.accessToken });
    expect(ledger.status).toBe(200);
    expect(ledger.body).toMatchObject({ total: 2, page: 1, per_page: 20 });
    expect(ledger.body.items).toEqual([
      expect.objectContaining({ amount: 500, balance_after: 1500, kind: 'purchase', created_at: expect.stringMatching(ISO_MS) }),
      expect.objectContaining({ amount: 1000, balance_after: 1000, kind: 'welcome_grant' }),
    ]);
  });
});

describe('members', () => {
  it('lets an owner add a registered user with a role, who then sees the tenant', async () => {
    const api = new Api();
    const owner = await newAccount(api, { company: 'Acme' });
    const colleague = await newAccount(api);
    const added = await api.post(`/api/v1/tenants/${owner.tenantId}/members`, {
      token: owner.accessToken,
      json: { email: colleague.email, role: 'member' },
    });
    expect(added.status).toBe(201);
    expect(added.body).toMatchObject({ user_id: colleague.userId, email: colleague.email, role: 'member' });

    const me = await api.get<{ tenants: unknown[] }>('/api/v1/auth/me', { token: colleague.accessToken });
    expect(me.body.tenants).toContainEqual({ id: owner.tenantId, name: 'Acme', role: 'member' });
    const asMember = await api.get('/api/v1/billing/credits', { token: colleague.accessToken, query: { tenant_id: owner.tenantId } });
    expect(asMember.status).toBe(200);
    expect(asMember.body.balance).toBe(1000);
  });
});

describe('platform surface', () => {
  it('echoes a valid X-Request-Id and generates one otherwise', async () => {
    const api = new Api();
    const echoed = await api.get('/healthz', { headers: { 'x-request-id': 'trace-me-123' } });
    expect(echoed.headers.get('x-request-id')).toBe('trace-me-123');
    const generated = await api.get('/healthz', { headers: { 'x-request-id': 'bad id with spaces' } });
    expect(generated.headers.get('x-request-id')).toMatch(/^[A-Za-z0-9._:-]{8,128}$/);
    expect(generated.headers.get('x-request-id')).not.toBe('bad id with spaces');
  });

  it('carries rate-limit headers on authenticated responses', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const first = await api.get('/api/v1/auth/me', { token: account.accessToken });
    const second = await api.get('/api/v1/auth/me', { token: account.accessToken });
    expect(first.headers.get('x-ratelimit-limit')).toBe('60');
    const remaining = Number(first.headers.get('x-ratelimit-remaining'));
    expect(Number(second.headers.get('x-ratelimit-remaining'))).toBe(remaining - 1);
    const reset = Number(first.headers.get('x-ratelimit-reset'));
    const now = Date.now() / 1000;
    expect(reset).toBeGreaterThan(now);
    expect(reset).toBeLessThanOrEqual(now + 61);
  });

  it('publishes an OpenAPI 3.1 document and the docs UI', async () => {
    const api = new Api();
    const spec = await api.get<{ openapi: string; paths: Record<string, Record<string, unknown>> }>('/openapi.json');
    expect(spec.status).toBe(200);
    expect(spec.body.openapi).toMatch(/^3\.1\./);
    for (const [path, method] of [
      ['/api/v1/auth/register', 'post'],
      ['/api/v1/auth/login', 'post'],
      ['/api/v1/auth/refresh', 'post'],
      ['/api/v1/auth/me', 'get'],
      ['/api/v1/auth/api-keys', 'post'],
      ['/api/v1/auth/api-keys', 'get'],
      ['/api/v1/auth/api-keys/{key_id}', 'delete'],
      ['/api/v1/billing/credits', 'get'],
      ['/api/v1/billing/transactions', 'get'],
      ['/api/v1/billing/purchases', 'post'],
    ] as const) {
      expect(spec.body.paths[path]?.[method], `${method} ${path}`).toBeDefined();
    }
    expect(Object.keys(spec.body.paths).filter((path) => path.startsWith('/v1/'))).toEqual([]);
    const docs = await api.get<string>('/docs/');
    expect(docs.status).toBe(200);
    expect(docs.body).toContain('<html');
  });

  it('reports liveness and readiness', async () => {
    const api = new Api();
    expect((await api.get('/healthz')).status).toBe(200);
    expect((await api.get('/readyz')).status).toBe(200);
  });
});
