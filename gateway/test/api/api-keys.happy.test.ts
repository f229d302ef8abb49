import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lastCall, principalOf } from '../support/calls.js';
import { as, ISO_MS, newAccount, newApiKey, startHarness, type Harness, matching, ANY_STRING } from '../support/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

describe('POST /auth/api-keys', () => {
  it('answers 201 with the secret, shown once, and every field', async () => {
    const account = await newAccount(h.app);
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
    const response = await as(h.app, account.token, {
      method: 'POST',
      url: '/api/v1/auth/api-keys',
      payload: { name: 'ci deploys', scopes: ['agents:read', 'billing:read', 'agents:read'], expires_at: expiresAt },
    });
    expect(response.statusCode).toBe(201);
    const body = response.json<Record<string, unknown>>();
    expect(Object.keys(body).sort()).toEqual(['created_at', 'expires_at', 'id', 'key', 'key_prefix', 'name', 'scopes']);
    expect(body['id']).toMatch(/^key_/);
    expect(body['name']).toBe('ci deploys');
    expect(body['key']).toMatch(/^ap_live_[0-9A-Za-z]{32}$/);
    expect(body['key_prefix']).toBe(String(body['key']).slice(0, 12));
    expect(body['scopes']).toEqual(['agents:read', 'billing:read']);
    expect(body['created_at']).toMatch(ISO_MS);
    expect(body['expires_at']).toBe(expiresAt);
  });

  it('answers expires_at null for a key that never expires', async () => {
    const account = await newAccount(h.app);
    const response = await as(h.app, account.token, { method: 'POST', url: '/api/v1/auth/api-keys', payload: { name: 'forever', scopes: ['*'] } });
    expect(response.statusCode).toBe(201);
    expect(response.json<{ expires_at: unknown; scopes: string[] }>()).toMatchObject({ expires_at: null, scopes: ['*'] });
  });
});

describe('GET /auth/api-keys', () => {
  it('lists keys by prefix, without secrets, with every field', async () => {
    const account = await newAccount(h.app);
    const created = await newApiKey(h.app, account, ['agents:read']);
    const response = await as(h.app, account.token, { method: 'GET', url: '/api/v1/auth/api-keys' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({
      items: [
        {
          id: created.id,
          name: ANY_STRING,
          key_prefix: created.key.slice(0, 12),
          scopes: ['agents:read'],
          last_used_at: null,
          created_at: matching(ISO_MS),
          expires_at: null,
        },
      ],
      total: 1,
      page: 1,
      per_page: 20,
    });
    expect(response.body).not.toContain(created.key);
  });

  it('shows last_used_at once the key was used, and pages newest first', async () => {
    const account = await newAccount(h.app);
    const keys = [];
    for (let n = 0; n < 3; n += 1) keys.push(await newApiKey(h.app, account, ['billing:read']));
    expect((await as(h.app, keys[0]?.key ?? '', { method: 'GET', url: '/api/v1/billing/credits' })).statusCode).toBe(200);
    const page = await as(h.app, account.token, { method: 'GET', url: '/api/v1/auth/api-keys', query: { page: '2', per_page: '2' } });
    expect(page.statusCode).toBe(200);
    const body = page.json<{ items: { id: string; last_used_at: string | null }[]; total: number; page: number; per_page: number }>();
    expect(body).toMatchObject({ total: 3, page: 2, per_page: 2 });
    expect(body.items.map((item) => item.id)).toEqual([keys[0]?.id]);
    expect(body.items[0]?.last_used_at).toMatch(ISO_MS);
    expect(principalOf(lastCall(h.identity, 'ListApiKeys'))?.tenantId).toBe(account.tenantId);
  });
});

describe('DELETE /auth/api-keys/{key_id}', () => {
  it('revokes the key, which stops working at once despite the cache', async () => {
    const account = await newAccount(h.app);
    const key = await newApiKey(h.app, account, ['billing:read']);
    expect((await as(h.app, key.key, { method: 'GET', url: '/api/v1/billing/credits' })).statusCode).toBe(200);
    const revoked = await as(h.app, account.token, { method: 'DELETE', url: `/api/v1/auth/api-keys/${key.id}` });
    expect(revoked.statusCode).toBe(200);
    expect(revoked.json()).toEqual({ success: true, message: 'API key revoked.' });
    const after = await as(h.app, key.key, { method: 'GET', url: '/api/v1/billing/credits' });
    expect(after.statusCode).toBe(401);
    const listed = await as(h.app, account.token, { method: 'GET', url: '/api/v1/auth/api-keys' });
    expect(listed.json()).toMatchObject({ items: [], total: 0 });
  });
});
