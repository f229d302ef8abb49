import { DomainError } from '@agent-platform/kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { as, expectError, newAccount, startHarness, type Harness } from '../../../../testing/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

const VALID = { name: 'Helper', type: 'support' };

describe('request shapes the gateway refuses before any call', () => {
  it.each([
    ['a missing name and type', {}, ['name', 'type']],
    ['a name that is not a string', { ...VALID, name: 7 }, ['name']],
    ['an empty memory_types list (gRPC would read it as "the default")', { ...VALID, memory_types: [] }, ['memory_types']],
    ['memory_types that are not strings', { ...VALID, memory_types: ['semantic', 3] }, ['memory_types[1]']],
    ['a config that is not an object', { ...VALID, config: ['model'] }, ['config']],
    ['a config value of the wrong type', { ...VALID, config: { temperature: 'hot', max_tokens: 1.5 } }, ['config.temperature', 'config.max_tokens']],
  ])('POST /agents: 422 for %s', async (_label, payload, fields) => {
    const account = await newAccount(h.app);
    const before = h.agentMemory.callsOf('createAgent').length;
    expectError(await as(h.app, account.token, { method: 'POST', url: '/api/v1/agents', payload }), 422, 'validation_error', fields);
    expect(h.agentMemory.callsOf('createAgent')).toHaveLength(before);
  });

  it('PUT needs name and type; PATCH needs neither', async () => {
    const account = await newAccount(h.app);
    const url = '/api/v1/agents/agt_01JD0000000000000000000000';
    expectError(await as(h.app, account.token, { method: 'PUT', url, payload: { description: 'x' } }), 422, 'validation_error', ['name', 'type']);
    expectError(await as(h.app, account.token, { method: 'PATCH', url, payload: { description: 'x' } }), 404, 'not_found');
  });

  it('answers 400 for malformed JSON and for a body that is not an object', async () => {
    const account = await newAccount(h.app);
    const headers = { 'content-type': 'application/json' };
    expectError(await as(h.app, account.token, { method: 'POST', url: '/api/v1/agents', headers, payload: '{"name": ' }), 400, 'invalid_request');
    expectError(await as(h.app, account.token, { method: 'POST', url: '/api/v1/agents', headers, payload: '[1]' }), 400, 'invalid_request');
  });

  it('answers 422 for paging out of range and 400 for paging that is not a number', async () => {
    const account = await newAccount(h.app);
    expectError(await as(h.app, account.token, { method: 'GET', url: '/api/v1/agents', query: { per_page: '101' } }), 422, 'validation_error', ['per_page']);
    expectError(await as(h.app, account.token, { method: 'GET', url: '/api/v1/agents', query: { page: 'two' } }), 400, 'invalid_request');
  });
});

describe("the service's answers", () => {
  it("pass its validation_error on with each field it names", async () => {
    const account = await newAccount(h.app);
    h.agentMemory.faults.set(
      'createAgent',
      DomainError.validation([
        { field: 'type', message: 'must be 1 to 64 characters of a-z, 0-9, _ and -' },
        { field: 'config.colour', message: 'is not a config key' },
      ]),
    );
    const refused = await as(h.app, account.token, { method: 'POST', url: '/api/v1/agents', payload: { ...VALID, type: 'Not Valid', config: { colour: 'blue' } } });
    const body = expectError(refused, 422, 'validation_error', ['type', 'config.colour']);
    expect(body.details?.[1]?.message).toBe('is not a config key');
  });

  it('answer 404 for an agent of another tenant, as for an absent one', async () => {
    const [alice, bob] = [await newAccount(h.app), await newAccount(h.app)];
    const created = await as(h.app, alice.token, { method: 'POST', url: '/api/v1/agents', payload: VALID });
    const url = `/api/v1/agents/${created.json<{ id: string }>().id}`;
    expectError(await as(h.app, bob.token, { method: 'GET', url }), 404, 'not_found');
    expectError(await as(h.app, bob.token, { method: 'DELETE', url }), 404, 'not_found');
    expect((await as(h.app, alice.token, { method: 'GET', url })).statusCode).toBe(200);
  });

  it('mask an internal failure and a dead service with fixed text', async () => {
    const account = await newAccount(h.app);
    h.agentMemory.faults.set('listAgents', new Error('SELECT * FROM agents failed: secret'));
    const failed = await as(h.app, account.token, { method: 'GET', url: '/api/v1/agents' });
    expect(expectError(failed, 500, 'internal_error').message).not.toContain('secret');
  });
});
