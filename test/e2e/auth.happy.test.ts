import { describe, expect, it } from 'vitest';
import { Api, ISO_MS, PASSWORD, id, newAccount, newApiKey, uniqueEmail } from './harness/client.js';
import { expectStatus, statusOf } from './harness/results.js';

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

describe('registration and login', () => {
  it('registers a user with a tenant and the welcome credits', async () => {
    const api = new Api();
    const email = uniqueEmail('Mixed.Case');
    const response = await api.anonymous.POST('/api/v1/auth/register', {
      body: { email: email.toUpperCase(), password: PASSWORD, full_name: 'Ada Lovelace', company: 'Analytical Engines' },
    });
    expect(expectStatus(response, 201)).toEqual({
      id: expect.stringMatching(id('usr')),
      email: email.toLowerCase(),
      full_name: 'Ada Lovelace',
      tenant_id: expect.stringMatching(id('tnt')),
      credits: 1000,
      created_at: expect.stringMatching(ISO_MS),
    });
  });

  it('logs in with a form body and with JSON', async () => {
    const { anonymous } = new Api();
    const email = uniqueEmail();
    expectStatus(await anonymous.POST('/api/v1/auth/register', { body: { email, password: PASSWORD } }), 201);
    const form = expectStatus(await anonymous.POST('/api/v1/auth/login', { body: { username: email, password: PASSWORD }, headers: FORM }));
    expect(form).toEqual({
      access_token: expect.stringMatching(/^[\w-]+\.[\w-]+\.[\w-]+$/),
      token_type: 'bearer',
      expires_in: 3600,
      refresh_token: expect.any(String),
      refresh_expires_in: 2592000,
    });
    const json = expectStatus(await anonymous.POST('/api/v1/auth/login', { body: { username: email, password: PASSWORD } }));
    expect(json.access_token).not.toBe(form.access_token);
  });

  it('shows the current user with the tenant membership', async () => {
    const account = await newAccount(new Api(), { full_name: 'Grace Hopper' });
    expect(expectStatus(await account.client.GET('/api/v1/auth/me'))).toEqual({
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
    const refreshed = expectStatus(await api.anonymous.POST('/api/v1/auth/refresh', { body: { refresh_token: account.refreshToken } }));
    expect(refreshed).toEqual({
      access_token: expect.any(String),
      token_type: 'bearer',
      expires_in: 3600,
      refresh_token: expect.any(String),
      refresh_expires_in: 2592000,
    });
    expect(refreshed.refresh_token).not.toBe(account.refreshToken);
    expect(await statusOf(api.withToken(refreshed.access_token).GET('/api/v1/auth/me'))).toBe(200);
    expect(await statusOf(api.anonymous.POST('/api/v1/auth/refresh', { body: { refresh_token: refreshed.refresh_token } }))).toBe(200);
  });

  it('serves the same operations under the /v1 alias', async () => {
    const api = new Api();
    const account = await newAccount(api);
    // Raw: the alias is served for older clients but is not part of the contract.
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
    const created = expectStatus(
      await account.client.POST('/api/v1/auth/api-keys', { body: { name: 'ci deploys', scopes: ['agents:read', 'billing:read'], expires_at: expiresAt } }),
      201,
    );
    expect(created).toEqual({
      id: expect.stringMatching(id('key')),
      name: 'ci deploys',
      key: expect.stringMatching(/^ap_live_[0-9A-Za-z]{32}$/),
      key_prefix: created.key.slice(0, 12),
      scopes: ['agents:read', 'billing:read'],
      created_at: expect.stringMatching(ISO_MS),
      expires_at: expiresAt,
    });

    const listed = expectStatus(await account.client.GET('/api/v1/auth/api-keys'));
    expect(listed).toEqual({
      items: [
        {
          id: created.id,
          name: 'ci deploys',
          key_prefix: created.key.slice(0, 12),
          scopes: ['agents:read', 'billing:read'],
          last_used_at: null,
          created_at: created.created_at,
          expires_at: expiresAt,
        },
      ],
      total: 1,
      page: 1,
      per_page: 20,
    });
    expect(JSON.stringify(listed)).not.toContain(created.key);

    const withKey = await api.withKey(created.key).GET('/api/v1/billing/credits');
    expect(expectStatus(withKey)).toEqual({ balance: 1000, threshold: 100, plan: 'free' });

    const afterUse = expectStatus(await account.client.GET('/api/v1/auth/api-keys'));
    expect(afterUse.items[0]?.last_used_at).toMatch(ISO_MS);
  });

  it('revokes a key', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const key = await newApiKey(api, account, ['billing:read']);
    expect(await statusOf(key.client.GET('/api/v1/billing/credits'))).toBe(200);
    const revoked = await account.client.DELETE('/api/v1/auth/api-keys/{key_id}', { params: { path: { key_id: key.id } } });
    expect(expectStatus(revoked)).toEqual({ success: true, message: expect.any(String) });
    expect(await statusOf(key.client.GET('/api/v1/billing/credits'))).toBe(401);
    expect((await account.client.GET('/api/v1/auth/api-keys')).data).toMatchObject({ items: [], total: 0 });
  });

  it('pages the key list newest first', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const keys = [];
    for (let n = 0; n < 3; n += 1) keys.push(await newApiKey(api, account, ['agents:read']));
    const page = expectStatus(await account.client.GET('/api/v1/auth/api-keys', { params: { query: { page: 2, per_page: 2 } } }));
    expect(page).toMatchObject({ total: 3, page: 2, per_page: 2 });
    expect(page.items.map((item) => item.id)).toEqual([keys[0]?.id]);
  });
});

describe('billing', () => {
  it('shows credits, buys credits and lists the ledger newest first', async () => {
    const { client } = await newAccount(new Api());
    expect((await client.GET('/api/v1/billing/credits')).data).toEqual({ balance: 1000, threshold: 100, plan: 'free' });

    const purchase = await client.POST('/api/v1/billing/purchases', { body: { credits: 500 } });
    expect(expectStatus(purchase, 201)).toEqual({
      id: expect.any(String),
      credits: 500,
      status: 'completed',
      balance: 1500,
      created_at: expect.stringMatching(ISO_MS),
    });

    const ledger = expectStatus(await client.GET('/api/v1/billing/transactions'));
    expect(ledger).toMatchObject({ total: 2, page: 1, per_page: 20 });
    expect(ledger.items).toEqual([
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
    const added = await owner.client.POST('/api/v1/tenants/{tenant_id}/members', {
      params: { path: { tenant_id: owner.tenantId } },
      body: { email: colleague.email, role: 'member' },
    });
    expect(expectStatus(added, 201)).toMatchObject({ user_id: colleague.userId, email: colleague.email, role: 'member' });

    const me = expectStatus(await colleague.client.GET('/api/v1/auth/me'));
    expect(me.tenants).toContainEqual({ id: owner.tenantId, name: 'Acme', role: 'member' });
    const asMember = await colleague.client.GET('/api/v1/billing/credits', { params: { query: { tenant_id: owner.tenantId } } });
    expect(expectStatus(asMember).balance).toBe(1000);
  });
});

describe('platform surface', () => {
  it('echoes a valid X-Request-Id and generates one otherwise', async () => {
    const { anonymous } = new Api();
    const echoed = await anonymous.GET('/healthz', { headers: { 'x-request-id': 'trace-me-123' } });
    expect(echoed.response.headers.get('x-request-id')).toBe('trace-me-123');
    const generated = await anonymous.GET('/healthz', { headers: { 'x-request-id': 'bad id with spaces' } });
    expect(generated.response.headers.get('x-request-id')).toMatch(/^[A-Za-z0-9._:-]{8,128}$/);
    expect(generated.response.headers.get('x-request-id')).not.toBe('bad id with spaces');
  });

  it('carries rate-limit headers on authenticated responses', async () => {
    const { client } = await newAccount(new Api());
    const first = (await client.GET('/api/v1/auth/me')).response.headers;
    const second = (await client.GET('/api/v1/auth/me')).response.headers;
    expect(first.get('x-ratelimit-limit')).toBe('60');
    const remaining = Number(first.get('x-ratelimit-remaining'));
    expect(Number(second.get('x-ratelimit-remaining'))).toBe(remaining - 1);
    const reset = Number(first.get('x-ratelimit-reset'));
    const now = Date.now() / 1000;
    expect(reset).toBeGreaterThan(now);
    expect(reset).toBeLessThanOrEqual(now + 61);
  });

  it('publishes an OpenAPI 3.1 document and the docs UI', async () => {
    const api = new Api();
    // Raw: the document and its UI describe the contract rather than belong to it.
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
    const { anonymous } = new Api();
    expect(await statusOf(anonymous.GET('/healthz'))).toBe(200);
    expect(await statusOf(anonymous.GET('/readyz'))).toBe(200);
  });
});
