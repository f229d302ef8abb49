import { describe, expect, it } from 'vitest';
import { Api, PASSWORD, newAccount, newApiKey, uniqueEmail } from './harness/client.js';
import { expectError, expectStatus, statusOf } from './harness/results.js';

// Requests the contract forbids (fields missing or of the wrong type, unknown fields, malformed
// bodies, other content types, unknown paths) go raw, past the typed client, which would refuse them.

describe('registration validation', () => {
  it.each([
    ['missing e-mail and password', {}, ['email', 'password']],
    ['malformed e-mail', { email: 'not-an-email', password: PASSWORD }, ['email']],
    ['short password', { email: uniqueEmail(), password: 'short' }, ['password']],
    ['overlong password', { email: uniqueEmail(), password: 'x'.repeat(129) }, ['password']],
    ['wrong types', { email: uniqueEmail(), password: PASSWORD, full_name: 42, company: ['x'] }, ['full_name', 'company']],
  ])('rejects %s with 422 naming the fields', async (_label, json, fields) => {
    expectError(await new Api().post('/api/v1/auth/register', { json }), 422, 'validation_error', fields);
  });

  it('answers 409 to a duplicate e-mail, whatever its case', async () => {
    const { anonymous } = new Api();
    const email = uniqueEmail();
    expectStatus(await anonymous.POST('/api/v1/auth/register', { body: { email, password: PASSWORD } }), 201);
    expectError(await anonymous.POST('/api/v1/auth/register', { body: { email: email.toUpperCase(), password: PASSWORD } }), 409, 'conflict');
  });

  it('ignores unknown fields', async () => {
    const response = await new Api().post('/api/v1/auth/register', { json: { email: uniqueEmail(), password: PASSWORD, plan: 'enterprise' } });
    expect(response.status).toBe(201);
  });
});

describe('malformed requests', () => {
  it('answers 400 to malformed JSON', async () => {
    const response = await new Api().post('/api/v1/auth/register', { raw: '{"email": ', contentType: 'application/json' });
    expectError(response, 400, 'invalid_request');
  });

  it('answers 400 to an empty JSON body', async () => {
    const response = await new Api().post('/api/v1/auth/register', { raw: '', contentType: 'application/json' });
    expectError(response, 400, 'invalid_request');
  });

  it('answers 400 to a content type it does not take', async () => {
    const response = await new Api().post('/api/v1/auth/register', { raw: 'email=a', contentType: 'text/plain' });
    expectError(response, 400, 'invalid_request');
  });

  it('answers 400 to an unparsable query parameter and 422 to an out-of-range one', async () => {
    const api = new Api();
    const account = await newAccount(api);
    expectError(await api.get('/api/v1/auth/api-keys', { token: account.accessToken, query: { page: 'abc' } }), 400, 'invalid_request');
    expectError(await account.client.GET('/api/v1/auth/api-keys', { params: { query: { per_page: 101 } } }), 422, 'validation_error', ['per_page']);
    expectError(await account.client.GET('/api/v1/auth/api-keys', { params: { query: { page: 0 } } }), 422, 'validation_error', ['page']);
  });

  it('answers 413 to a body over 1 MiB', async () => {
    const body = { email: uniqueEmail(), password: PASSWORD, full_name: 'x'.repeat(1024 * 1024) };
    expectError(await new Api().anonymous.POST('/api/v1/auth/register', { body }), 413, 'payload_too_large');
  });

  it('answers 404 in the error format for an unknown route', async () => {
    expectError(await new Api().get('/api/v1/nothing-here'), 404, 'not_found');
  });
});

describe('login and refresh validation', () => {
  it('requires username and password', async () => {
    expectError(await new Api().post('/api/v1/auth/login', { form: {} }), 422, 'validation_error', ['username', 'password']);
  });

  it('requires a refresh token', async () => {
    expectError(await new Api().post('/api/v1/auth/refresh', { json: {} }), 422, 'validation_error', ['refresh_token']);
  });
});

describe('API key validation', () => {
  it.each([
    ['missing name and scopes', {}, ['name', 'scopes']],
    ['an unknown scope', { name: 'k', scopes: ['agents:read', 'agents:destroy'] }, ['scopes[1]']],
    ['an expiry in the past', { name: 'k', scopes: ['agents:read'], expires_at: '2001-01-01T00:00:00.000Z' }, ['expires_at']],
    ['a malformed expiry', { name: 'k', scopes: ['agents:read'], expires_at: 'tomorrow' }, ['expires_at']],
    ['an empty name', { name: '', scopes: ['agents:read'] }, ['name']],
  ])('rejects %s with 422', async (_label, json, fields) => {
    const api = new Api();
    const account = await newAccount(api);
    expectError(await api.post('/api/v1/auth/api-keys', { token: account.accessToken, json }), 422, 'validation_error', fields);
  });

  it('answers 404 when revoking an unknown key and a key of another tenant', async () => {
    const api = new Api();
    const alice = await newAccount(api);
    const bob = await newAccount(api);
    const bobsKey = await newApiKey(api, bob, ['agents:read']);
    const revoke = (key_id: string) => alice.client.DELETE('/api/v1/auth/api-keys/{key_id}', { params: { path: { key_id } } });
    expectError(await revoke('key_01HZZZZZZZZZZZZZZZZZZZZZZZ'), 404, 'not_found');
    expectError(await revoke(bobsKey.id), 404, 'not_found');
    expect(await statusOf(bobsKey.client.GET('/api/v1/billing/credits'))).toBe(403);
    expect(expectStatus(await bob.client.GET('/api/v1/auth/api-keys')).total).toBe(1);
  });
});

describe('purchase validation', () => {
  it.each([[0], [-5], [1.5], ['100']])('rejects %s credits with 422', async (credits) => {
    const api = new Api();
    const account = await newAccount(api);
    expectError(await api.post('/api/v1/billing/purchases', { token: account.accessToken, json: { credits } }), 422, 'validation_error', ['credits']);
  });
});
