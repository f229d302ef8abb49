import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PrincipalKind } from '@agent-platform/kit/grpc';
import { lastCall, principalOf } from '../support/calls.js';
import { as, bearer, ISO_MS, newAccount, newApiKey, PASSWORD, startHarness, uniqueEmail, type Harness, matching, ANY_STRING } from '../support/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

describe('POST /auth/register', () => {
  it('answers 201 with the new user, tenant and welcome credits', async () => {
    const email = uniqueEmail('Mixed.Case');
    const response = await h.app.inject({
      method: 'POST',
      url: '/api/v1/auth/register',
      payload: { email: email.toUpperCase(), password: PASSWORD, full_name: 'Ada Lovelace', company: 'Engines', unknown: 'ignored' },
    });
    expect(response.statusCode).toBe(201);
    const body = response.json<Record<string, unknown>>();
    expect(Object.keys(body).sort()).toEqual(['created_at', 'credits', 'email', 'full_name', 'id', 'tenant_id']);
    expect(body['id']).toMatch(/^usr_/);
    expect(body['email']).toBe(email.toLowerCase());
    expect(body['full_name']).toBe('Ada Lovelace');
    expect(body['tenant_id']).toMatch(/^tnt_/);
    expect(body['credits']).toBe(1000);
    expect(body['created_at']).toMatch(ISO_MS);
    expect(lastCall(h.identity, 'Register')?.requestId).toBe(response.headers['x-request-id']);
    // The tenant is named after the company (decisions §3), as the new owner sees it.
    const login = await h.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: email, password: PASSWORD } });
    const me = await h.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: bearer(login.json<{ access_token: string }>().access_token) });
    expect(me.json<{ tenants: unknown[] }>().tenants).toEqual([{ id: body['tenant_id'], name: 'Engines', role: 'owner' }]);
  });
});

describe('POST /auth/login', () => {
  it('accepts a form body, as the spec has it', async () => {
    const account = await newAccount(h.app);
    const response = await h.app.inject({
      method: 'POST',
      url: '/api/v1/auth/login',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ username: account.email, password: PASSWORD }).toString(),
    });
    expect(response.statusCode).toBe(200);
    const body = response.json<Record<string, unknown>>();
    expect(Object.keys(body).sort()).toEqual(['access_token', 'expires_in', 'refresh_expires_in', 'refresh_token', 'token_type']);
    expect(body['access_token']).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(body['token_type']).toBe('bearer');
    expect(body['expires_in']).toBe(3600);
    expect(body['refresh_token']).toEqual(ANY_STRING);
    expect(body['refresh_expires_in']).toBe(2_592_000);
  });

  it('accepts JSON too, and the token it returns works', async () => {
    const account = await newAccount(h.app);
    const response = await h.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: account.email.toUpperCase(), password: PASSWORD } });
    expect(response.statusCode).toBe(200);
    const token = response.json<{ access_token: string }>().access_token;
    expect((await as(h.app, token, { method: 'GET', url: '/api/v1/auth/me' })).statusCode).toBe(200);
  });
});

describe('POST /auth/refresh', () => {
  it('rotates the pair', async () => {
    const account = await newAccount(h.app);
    const response = await h.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', payload: { refresh_token: account.refreshToken } });
    expect(response.statusCode).toBe(200);
    const body = response.json<{ access_token: string; token_type: string; expires_in: number; refresh_token: string; refresh_expires_in: number }>();
    expect(body.token_type).toBe('bearer');
    expect(body.expires_in).toBe(3600);
    expect(body.refresh_expires_in).toBe(2_592_000);
    expect(body.refresh_token).not.toBe(account.refreshToken);
    expect((await as(h.app, body.access_token, { method: 'GET', url: '/api/v1/auth/me' })).statusCode).toBe(200);
  });
});

describe('GET /auth/me', () => {
  it('returns the user with every membership', async () => {
    const account = await newAccount(h.app, { full_name: 'Grace Hopper' });
    const response = await as(h.app, account.token, { method: 'GET', url: '/api/v1/auth/me' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({
      id: account.userId,
      email: account.email,
      full_name: 'Grace Hopper',
      is_active: true,
      created_at: matching(ISO_MS),
      tenants: [{ id: account.tenantId, name: "Grace Hopper's workspace", role: 'owner' }],
    });
  });

  it("answers an API key with the key's creator, and forwards the key's principal", async () => {
    const account = await newAccount(h.app);
    const key = await newApiKey(h.app, account, ['agents:read']);
    const response = await as(h.app, key.key, { method: 'GET', url: '/api/v1/auth/me' });
    expect(response.statusCode).toBe(200);
    expect(response.json<{ id: string }>().id).toBe(account.userId);
    expect(principalOf(lastCall(h.identity, 'GetCurrentUser'))).toEqual({
      kind: PrincipalKind.KIND_API_KEY,
      userId: account.userId,
      apiKeyId: key.id,
      tenantId: account.tenantId,
      role: 'owner',
      scopes: ['agents:read'],
    });
  });

  it('forwards a user principal with the request id', async () => {
    const account = await newAccount(h.app);
    const response = await as(h.app, account.token, { method: 'GET', url: '/api/v1/auth/me', headers: { 'x-request-id': 'req-me-1' } });
    expect(response.statusCode).toBe(200);
    const call = lastCall(h.identity, 'GetCurrentUser');
    expect(call?.requestId).toBe('req-me-1');
    expect(principalOf(call)).toEqual({ kind: PrincipalKind.KIND_USER, userId: account.userId, apiKeyId: '', tenantId: account.tenantId, role: 'owner', scopes: [] });
  });
});

describe('the /v1 alias', () => {
  it('serves the same handlers under /v1', async () => {
    const email = uniqueEmail();
    const registered = await h.app.inject({ method: 'POST', url: '/v1/auth/register', payload: { email, password: PASSWORD } });
    expect(registered.statusCode).toBe(201);
    const login = await h.app.inject({ method: 'POST', url: '/v1/auth/login', payload: { username: email, password: PASSWORD } });
    expect(login.statusCode).toBe(200);
    const me = await as(h.app, login.json<{ access_token: string }>().access_token, { method: 'GET', url: '/v1/auth/me' });
    expect(me.statusCode).toBe(200);
    expect(me.json<{ id: string }>().id).toBe(registered.json<{ id: string }>().id);
    expect(me.headers['x-ratelimit-limit']).toBeDefined();
  });
});
