import { Writable } from 'node:stream';
import { createLogger, DomainError } from '@agent-platform/kit';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildGateway, loadGatewayConfig } from '../../src/gateway.js';
import { addMember, as, expectError, newAccount, newApiKey, PASSWORD, startHarness, uniqueEmail, type Harness } from '../support/harness.js';

const logLines: string[] = [];
let h: Harness;
beforeAll(async () => {
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logLines.push(chunk.toString());
      done();
    },
  });
  h = await startHarness({ BODY_LIMIT_BYTES: '4096' }, createLogger({ service: 'gateway-test', level: 'error', destination }));
});
afterAll(async () => {
  await h.close();
});
afterEach(() => {
  h.identity.heal();
});

const register = (payload: unknown) => h.app.inject({ method: 'POST', url: '/api/v1/auth/register', payload: payload as Record<string, unknown> });

describe('400 invalid_request', () => {
  it('for malformed JSON, an empty JSON body and a body that is not an object', async () => {
    const json = { 'content-type': 'application/json' };
    expectError(await h.app.inject({ method: 'POST', url: '/api/v1/auth/register', headers: json, payload: '{"email": ' }), 400, 'invalid_request');
    expectError(await h.app.inject({ method: 'POST', url: '/api/v1/auth/register', headers: json, payload: '' }), 400, 'invalid_request');
    expectError(await h.app.inject({ method: 'POST', url: '/api/v1/auth/register', headers: json, payload: '[1,2]' }), 400, 'invalid_request');
    expectError(await h.app.inject({ method: 'POST', url: '/api/v1/auth/register' }), 400, 'invalid_request');
  });

  it('for a content type the route does not take, forms included outside login', async () => {
    expectError(await h.app.inject({ method: 'POST', url: '/api/v1/auth/register', headers: { 'content-type': 'text/plain' }, payload: 'email=a' }), 400, 'invalid_request');
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    expectError(await h.app.inject({ method: 'POST', url: '/api/v1/auth/register', headers: form, payload: `email=${uniqueEmail()}&password=x` }), 400, 'invalid_request');
  });

  it('for an unparsable or repeated query parameter, naming it', async () => {
    const account = await newAccount(h.app);
    const abc = expectError(await as(h.app, account.token, { method: 'GET', url: '/api/v1/auth/api-keys?page=abc' }), 400, 'invalid_request', ['page']);
    expect(abc.message).toContain('query');
    expectError(await as(h.app, account.token, { method: 'GET', url: '/api/v1/billing/transactions?per_page=1.5' }), 400, 'invalid_request', ['per_page']);
    expectError(await as(h.app, account.token, { method: 'GET', url: '/api/v1/auth/api-keys?page=1&page=2' }), 400, 'invalid_request', ['page']);
    expectError(await as(h.app, account.token, { method: 'GET', url: `/api/v1/billing/credits?tenant_id=a&tenant_id=b` }), 400, 'invalid_request', ['tenant_id']);
  });

  it('for a malformed URL', async () => {
    expectError(await h.app.inject({ method: 'GET', url: '/api/v1/auth/api-keys/%E0%A4%A' }), 400, 'invalid_request');
  });
});

describe('422 validation_error naming each field', () => {
  it.each([
    ['missing e-mail and password', {}, ['email', 'password']],
    ['a malformed e-mail', { email: 'not-an-email', password: PASSWORD }, ['email']],
    ['a short password', { email: uniqueEmail(), password: 'short' }, ['password']],
    ['an overlong password', { email: uniqueEmail(), password: 'x'.repeat(129) }, ['password']],
    ['wrong types', { email: uniqueEmail(), password: PASSWORD, full_name: 42, company: ['x'] }, ['full_name', 'company']],
  ])('registration with %s', async (_label, payload, fields) => {
    const body = expectError(await register(payload), 422, 'validation_error', fields);
    expect(body.details?.every((detail) => detail.message.length > 0)).toBe(true);
  });

  it('says Required for a missing field', async () => {
    const body = expectError(await register({ password: PASSWORD }), 422, 'validation_error', ['email']);
    expect(body.details?.[0]?.message).toBe('is required');
  });

  it('for login without username and password, as a form and as JSON', async () => {
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    expectError(await h.app.inject({ method: 'POST', url: '/api/v1/auth/login', headers: form, payload: '' }), 422, 'validation_error', ['username', 'password']);
    expectError(await h.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: {} }), 422, 'validation_error', ['username', 'password']);
  });

  it('for refresh without a token', async () => {
    expectError(await h.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', payload: {} }), 422, 'validation_error', ['refresh_token']);
  });

  it.each([
    ['missing name and scopes', {}, ['name', 'scopes']],
    ['an unknown scope', { name: 'k', scopes: ['agents:read', 'agents:destroy'] }, ['scopes[1]']],
    ['no scopes', { name: 'k', scopes: [] }, ['scopes']],
    ['an expiry in the past', { name: 'k', scopes: ['agents:read'], expires_at: '2001-01-01T00:00:00.000Z' }, ['expires_at']],
    ['a malformed expiry', { name: 'k', scopes: ['agents:read'], expires_at: 'tomorrow' }, ['expires_at']],
    ['an empty name', { name: '', scopes: ['agents:read'] }, ['name']],
  ])('API key creation with %s', async (_label, payload, fields) => {
    const account = await newAccount(h.app);
    expectError(await as(h.app, account.token, { method: 'POST', url: '/api/v1/auth/api-keys', payload }), 422, 'validation_error', fields);
  });

  it.each([[0], [-5], [1.5], ['100'], [1_000_001]])('a purchase of %s credits', async (credits) => {
    const account = await newAccount(h.app);
    expectError(await as(h.app, account.token, { method: 'POST', url: '/api/v1/billing/purchases', payload: { credits } }), 422, 'validation_error', ['credits']);
  });

  it('for out-of-range paging', async () => {
    const account = await newAccount(h.app);
    expectError(await as(h.app, account.token, { method: 'GET', url: '/api/v1/auth/api-keys?per_page=101' }), 422, 'validation_error', ['per_page']);
    expectError(await as(h.app, account.token, { method: 'GET', url: '/api/v1/billing/transactions?page=0' }), 422, 'validation_error', ['page']);
  });

  it('for a member role that cannot be granted, and an empty tenant_id', async () => {
    const owner = await newAccount(h.app);
    const other = await newAccount(h.app);
    const url = `/api/v1/tenants/${owner.tenantId}/members`;
    expectError(await as(h.app, owner.token, { method: 'POST', url, payload: { email: other.email, role: 'owner' } }), 422, 'validation_error', ['role']);
    expectError(await as(h.app, owner.token, { method: 'GET', url: '/api/v1/billing/credits?tenant_id=' }), 422, 'validation_error', ['tenant_id']);
  });
});

describe('other client errors', () => {
  it('404 for an unknown route, method or trailing slash', async () => {
    expectError(await h.app.inject({ method: 'GET', url: '/api/v1/nothing-here' }), 404, 'not_found');
    expectError(await h.app.inject({ method: 'PUT', url: '/api/v1/auth/login' }), 404, 'not_found');
    expectError(await h.app.inject({ method: 'GET', url: '/nowhere' }), 404, 'not_found');
  });

  it('413 for a body over BODY_LIMIT_BYTES, JSON and form alike', async () => {
    const big = { email: uniqueEmail(), password: PASSWORD, full_name: 'x'.repeat(5000) };
    expectError(await register(big), 413, 'payload_too_large');
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    expectError(await h.app.inject({ method: 'POST', url: '/api/v1/auth/login', headers: form, payload: `username=a&password=${'x'.repeat(5000)}` }), 413, 'payload_too_large');
  });

  it('413 after reading a body up to 8 times the limit, keeping the connection; a larger one is cut off', async () => {
    // Closed mid-upload, a client still sending (fetch does not wait for 100 Continue) may see EPIPE, not the 413.
    const drained = await register({ email: uniqueEmail(), password: PASSWORD, full_name: 'x'.repeat(8 * 4096 - 200) });
    expectError(drained, 413, 'payload_too_large');
    expect(drained.headers.connection).not.toBe('close');
    const cutOff = await register({ email: uniqueEmail(), password: PASSWORD, full_name: 'x'.repeat(8 * 4096 + 1) });
    expectError(cutOff, 413, 'payload_too_large');
    expect(cutOff.headers.connection).toBe('close');
  });

  it('maps identity DomainErrors through the kit table: 409, 404, 403', async () => {
    const email = uniqueEmail();
    expect((await register({ email, password: PASSWORD })).statusCode).toBe(201);
    expectError(await register({ email: email.toUpperCase(), password: PASSWORD }), 409, 'conflict');

    const alice = await newAccount(h.app);
    const bob = await newAccount(h.app);
    const bobsKey = await newApiKey(h.app, bob, ['agents:read']);
    expectError(await as(h.app, alice.token, { method: 'DELETE', url: '/api/v1/auth/api-keys/key_01HZZZZZZZZZZZZZZZZZZZZZZZ' }), 404, 'not_found');
    expectError(await as(h.app, alice.token, { method: 'DELETE', url: `/api/v1/auth/api-keys/${bobsKey.id}` }), 404, 'not_found');

    await addMember(h.app, alice, bob, 'admin');
    expectError(await as(h.app, bob.token, { method: 'DELETE', url: `/api/v1/tenants/${alice.tenantId}/members/${alice.userId}` }), 403, 'forbidden');
  });
});

describe('5xx', () => {
  it('answers 500 internal_error without internals, and logs it with the request id', async () => {
    const account = await newAccount(h.app);
    const spy = vi.spyOn(h.app.identity.billing, 'getCredits').mockRejectedValueOnce(new TypeError('cannot read /srv/secret.ts:42 password=hunter2'));
    const response = await as(h.app, account.token, { method: 'GET', url: '/api/v1/billing/credits', headers: { 'x-request-id': 'req-boom-1' } });
    spy.mockRestore();
    const body = expectError(response, 500, 'internal_error');
    expect(body.message).toBe('An unexpected error occurred.');
    expect(response.body).not.toMatch(/hunter2|secret|TypeError|\.ts:/);
    const logged = logLines.find((line) => line.includes('req-boom-1'));
    expect(logged).toContain('hunter2');
  });

  it('masks the message of an unexpected identity failure and of an upstream 5xx', async () => {
    const account = await newAccount(h.app);
    h.identity.inject('GetCredits', { fail: new Error('database password is hunter2') });
    const internal = await as(h.app, account.token, { method: 'GET', url: '/api/v1/billing/credits' });
    expectError(internal, 500, 'internal_error');
    expect(internal.body).not.toContain('hunter2');

    h.identity.inject('GetCredits', { fail: new DomainError('upstream_error', 'provider key sk-live-123 rejected') });
    const upstream = await as(h.app, account.token, { method: 'GET', url: '/api/v1/billing/credits' });
    expectError(upstream, 502, 'upstream_error');
    expect(upstream.body).not.toContain('sk-live-123');
  });

  it('answers 503 service_unavailable when identity is down', async () => {
    // A gateway of its own whose identity address has nothing listening.
    const config = loadGatewayConfig({ IDENTITY_ADDR: '127.0.0.1:1', GRPC_DEADLINE_MS: '500', HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'silent' });
    const down = await buildGateway(config, { logger: createLogger({ service: 'gateway-test', level: 'silent' }) });
    try {
      expectError(await down.app.inject({ method: 'POST', url: '/api/v1/auth/register', payload: { email: uniqueEmail(), password: PASSWORD } }), 503, 'service_unavailable');
    } finally {
      await down.stop();
    }
  });

  it('answers 503 service_unavailable when identity does not answer within GRPC_DEADLINE_MS', async () => {
    const account = await newAccount(h.app);
    h.identity.inject('GetCredits', { hang: true });
    expectError(await as(h.app, account.token, { method: 'GET', url: '/api/v1/billing/credits' }), 503, 'service_unavailable');
  });
});
