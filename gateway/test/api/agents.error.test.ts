import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { newAgent } from '../support/agents.js';
import { as, expectError, newAccount, startHarness, type Harness } from '../support/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterEach(() => {
  h.agentMemory.heal();
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
    const before = h.agentMemory.calls.length;
    expectError(await as(h.app, account.token, { method: 'POST', url: '/api/v1/agents', payload }), 422, 'validation_error', fields);
    expect(h.agentMemory.calls).toHaveLength(before);
  });

  it('PUT needs name and type; PATCH needs neither', async () => {
    const account = await newAccount(h.app);
    const agent = await newAgent(h.app, account.token);
    const url = `/api/v1/agents/${agent.id}`;
    const before = h.agentMemory.calls.length;
    expectError(await as(h.app, account.token, { method: 'PUT', url, payload: { description: 'x' } }), 422, 'validation_error', ['name', 'type']);
    expect(h.agentMemory.calls).toHaveLength(before);
    const patched = await as(h.app, account.token, { method: 'PATCH', url, payload: { description: 'x' } });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(patched.json()).toMatchObject({ name: agent.name, type: agent.type, description: 'x' });
  });

  it('answers 400 for malformed JSON and for a body that is not an object', async () => {
    const account = await newAccount(h.app);
    const headers = { 'content-type': 'application/json' };
    const before = h.agentMemory.calls.length;
    expectError(await as(h.app, account.token, { method: 'POST', url: '/api/v1/agents', headers, payload: '{"name": ' }), 400, 'invalid_request');
    expectError(await as(h.app, account.token, { method: 'POST', url: '/api/v1/agents', headers, payload: '[1]' }), 400, 'invalid_request');
    expect(h.agentMemory.calls).toHaveLength(before);
  });

  it('answers 422 for paging out of range and 400 for paging that is not a number', async () => {
    const account = await newAccount(h.app);
    const before = h.agentMemory.calls.length;
    expectError(await as(h.app, account.token, { method: 'GET', url: '/api/v1/agents', query: { per_page: '101' } }), 422, 'validation_error', ['per_page']);
    expectError(await as(h.app, account.token, { method: 'GET', url: '/api/v1/agents', query: { page: 'two' } }), 400, 'invalid_request');
    expect(h.agentMemory.calls).toHaveLength(before);
  });
});

describe("the service's answers", () => {
  it('pass its validation_error on with each field it names', async () => {
    const account = await newAccount(h.app);
    const payload = { ...VALID, type: 'Not Valid', memory_types: ['semantic', 'dreams'], config: { temperature: 3, colour: 'blue' } };
    const refused = await as(h.app, account.token, { method: 'POST', url: '/api/v1/agents', payload });
    const body = expectError(refused, 422, 'validation_error', ['type', 'memory_types[1]', 'config.temperature', 'config.colour']);
    const messages = Object.fromEntries((body.details ?? []).map((detail) => [detail.field, detail.message]));
    expect(messages['config.colour']).toMatch(/not a config key/);
    expect(messages['config.temperature']).toMatch(/0 to 2/);
    expect((await as(h.app, account.token, { method: 'GET', url: '/api/v1/agents' })).json()).toMatchObject({ total: 0 });
  });

  it('refuse an update by field, and the agent stays as it was', async () => {
    const account = await newAccount(h.app);
    const agent = await newAgent(h.app, account.token, { config: { model: 'm' } });
    const url = `/api/v1/agents/${agent.id}`;
    expectError(await as(h.app, account.token, { method: 'PATCH', url, payload: { name: '  ', config: { top_p: 2 } } }), 422, 'validation_error', ['name', 'config.top_p']);
    expect((await as(h.app, account.token, { method: 'GET', url })).json()).toEqual(agent);
  });

  it('answer 404 for an agent of another tenant, as for an absent one, and leave it alone', async () => {
    const [alice, bob] = [await newAccount(h.app), await newAccount(h.app)];
    const agent = await newAgent(h.app, alice.token);
    const url = `/api/v1/agents/${agent.id}`;
    for (const route of [
      { method: 'GET' as const, url },
      { method: 'PATCH' as const, url, payload: { name: 'taken over' } },
      { method: 'PUT' as const, url, payload: VALID },
      { method: 'DELETE' as const, url },
      { method: 'GET' as const, url: '/api/v1/agents/agt_01JD0000000000000000000000' },
    ]) {
      expectError(await as(h.app, bob.token, route), 404, 'not_found');
    }
    expect((await as(h.app, alice.token, { method: 'GET', url })).json()).toEqual(agent);
  });

  it('mask an internal failure with fixed text', async () => {
    const account = await newAccount(h.app);
    h.agentMemory.inject('ListAgents', { fail: new Error('SELECT * FROM agents failed: secret') });
    const failed = await as(h.app, account.token, { method: 'GET', url: '/api/v1/agents' });
    expect(expectError(failed, 500, 'internal_error').message).toBe('An unexpected error occurred.');
    expect(failed.body).not.toContain('secret');
  });

  it('answer 503 with fixed text when the service cannot be reached', async () => {
    const account = await newAccount(h.app);
    h.agentMemory.inject('GetAgent', { down: true });
    const down = await as(h.app, account.token, { method: 'GET', url: '/api/v1/agents/agt_01JD0000000000000000000000' });
    expect(expectError(down, 503, 'service_unavailable').message).toBe('A dependency is unavailable; retry shortly.');
  });
});
