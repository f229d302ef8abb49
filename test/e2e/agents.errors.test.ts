import { describe, expect, it } from 'vitest';
import { Api, newAccount, type Account, type ApiResponse } from './harness/client.js';
import { postForEvents } from './harness/sse.js';

const VALID = { name: 'Support bot', type: 'support' };
const UNKNOWN = {
  agent: 'agt_01JD0000000000000000000000',
  session: 'ses_01JD0000000000000000000000',
  memory: 'mem_01JD0000000000000000000000',
  document: 'doc_01JD0000000000000000000000',
};

function expectError(response: ApiResponse<unknown>, status: number, code: string, fields?: string[]): void {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  const body = response.body as { error: string; message: string; details?: { field: string }[] };
  expect(body).toMatchObject({ error: code, message: expect.any(String) });
  if (fields) expect(body.details?.map((detail) => detail.field).sort()).toEqual([...fields].sort());
}

async function createAgent(api: Api, account: Account, json: Record<string, unknown> = {}): Promise<string> {
  const created = await api.post<{ id: string }>('/api/v1/agents', { token: account.accessToken, json: { ...VALID, ...json } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body.id;
}

describe('agent validation', () => {
  it.each([
    ['a missing name and type', {}, ['name', 'type']],
    ['a blank name', { ...VALID, name: '   ' }, ['name']],
    ['a name over 200 characters', { ...VALID, name: 'n'.repeat(201) }, ['name']],
    ['a type outside [a-z0-9_-]', { ...VALID, type: 'Customer Support!' }, ['type']],
    ['a type over 64 characters', { ...VALID, type: 't'.repeat(65) }, ['type']],
    ['an unknown memory type', { ...VALID, memory_types: ['semantic', 'long_term'] }, ['memory_types[1]']],
    ['an empty memory_types list', { ...VALID, memory_types: [] }, ['memory_types']],
    ['config.temperature above 2', { ...VALID, config: { temperature: 2.5 } }, ['config.temperature']],
    ['config.temperature below 0', { ...VALID, config: { temperature: -0.1 } }, ['config.temperature']],
    ['config.top_p above 1', { ...VALID, config: { top_p: 1.2 } }, ['config.top_p']],
    ['config.max_tokens of 0', { ...VALID, config: { max_tokens: 0 } }, ['config.max_tokens']],
    ['an unknown config key', { ...VALID, config: { model: 'm', colour: 'blue' } }, ['config.colour']],
    ['a config that is not an object', { ...VALID, config: 'fast' }, ['config']],
    [
      'several problems at once, each named',
      { name: '', type: 'BAD', memory_types: ['nope'], config: { temperature: 3, top_p: -1, extra: 1 } },
      ['name', 'type', 'memory_types[0]', 'config.temperature', 'config.top_p', 'config.extra'],
    ],
  ])('POST /agents answers 422 for %s', async (_label, json, fields) => {
    const api = new Api();
    const account = await newAccount(api);
    expectError(await api.post('/api/v1/agents', { token: account.accessToken, json }), 422, 'validation_error', fields);
  });

  it('applies the same rules to PATCH and PUT; PUT needs name and type', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const agentId = await createAgent(api, account);
    const path = `/api/v1/agents/${agentId}`;
    const auth = { token: account.accessToken };
    expectError(await api.patch(path, { ...auth, json: { config: { temperature: 9 } } }), 422, 'validation_error', ['config.temperature']);
    expectError(await api.patch(path, { ...auth, json: { type: 'Two Words' } }), 422, 'validation_error', ['type']);
    expectError(await api.request('PUT', path, { ...auth, json: { name: 'Only a name' } }), 422, 'validation_error', ['type']);
    // Nothing changed.
    expect((await api.get(path, auth)).body).toMatchObject({ ...VALID, config: {} });
  });

  it('answers 400 for malformed JSON and 422 for paging out of range', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const agentId = await createAgent(api, account);
    const malformed = { token: account.accessToken, raw: '{"name": "x",', contentType: 'application/json' };
    expectError(await api.post('/api/v1/agents', malformed), 400, 'invalid_request');
    expectError(await api.patch(`/api/v1/agents/${agentId}`, malformed), 400, 'invalid_request');
    expectError(await api.post(`/api/v1/agents/${agentId}/chat`, malformed), 400, 'invalid_request');
    expectError(await api.post('/api/v1/memory', malformed), 400, 'invalid_request');
    expectError(await api.post('/api/v1/memory/search', malformed), 400, 'invalid_request');
    expectError(await api.get('/api/v1/agents', { token: account.accessToken, query: { per_page: 0 } }), 422, 'validation_error', ['per_page']);
  });
});

/** Every agent and memory route that names an agent, a session, a memory item or a document. */
function everyRoute(ids: { agent: string; session: string; memory: string; document: string }): [string, string, unknown][] {
  const agent = `/api/v1/agents/${ids.agent}`;
  return [
    ['GET', agent, undefined],
    ['PATCH', agent, { name: 'x' }],
    ['PUT', agent, VALID],
    ['DELETE', agent, undefined],
    ['POST', `${agent}/chat`, { message: 'hello' }],
    ['GET', `${agent}/sessions`, undefined],
    ['GET', `${agent}/sessions/${ids.session}/messages`, undefined],
    ['DELETE', `${agent}/sessions/${ids.session}`, undefined],
    ['POST', `${agent}/memory/consolidate`, undefined],
    ['POST', '/api/v1/memory', { agent_id: ids.agent, memory_type: 'semantic', content: 'x' }],
    ['GET', `/api/v1/memory?agent_id=${ids.agent}`, undefined],
    ['POST', '/api/v1/memory/search', { agent_id: ids.agent, query: 'x' }],
    ['POST', '/api/v1/memory/documents', { agent_id: ids.agent, content: 'x' }],
    ['DELETE', `/api/v1/memory/${ids.memory}`, undefined],
    ['DELETE', `/api/v1/memory/documents/${ids.document}`, undefined],
  ];
}

describe('404 on every agent and memory route', () => {
  it('for ids that do not exist', async () => {
    const api = new Api();
    const account = await newAccount(api);
    for (const [method, path, json] of everyRoute(UNKNOWN)) {
      expectError(await api.request(method, path, { token: account.accessToken, ...(json === undefined ? {} : { json }) }), 404, 'not_found');
    }
    const streamed = await postForEvents(api, `/api/v1/agents/${UNKNOWN.agent}/chat`, { token: account.accessToken, json: { message: 'hi', stream: true } });
    expect(streamed.events).toBeUndefined();
    expect(streamed.status).toBe(404);
  });

  it("for another tenant's agent, session, memory item and document, which stay untouched", async () => {
    const api = new Api();
    const [alice, bob] = [await newAccount(api), await newAccount(api)];
    const asAlice = { token: alice.accessToken };
    const agent = await createAgent(api, alice);
    const chat = await api.post<{ session_id: string }>(`/api/v1/agents/${agent}/chat`, { ...asAlice, json: { message: 'hello' } });
    const memory = await api.post<{ id: string }>('/api/v1/memory', { ...asAlice, json: { agent_id: agent, memory_type: 'semantic', content: 'A fact.' } });
    const document = await api.post<{ id: string }>('/api/v1/memory/documents', { ...asAlice, json: { agent_id: agent, content: 'A manual.' } });
    const ids = { agent, session: chat.body.session_id, memory: memory.body.id, document: document.body.id };

    for (const [method, path, json] of everyRoute(ids)) {
      expectError(await api.request(method, path, { token: bob.accessToken, ...(json === undefined ? {} : { json }) }), 404, 'not_found');
    }
    // Bob's own agent does not open Alice's session either.
    const bobsAgent = await createAgent(api, bob);
    expectError(await api.get(`/api/v1/agents/${bobsAgent}/sessions/${ids.session}/messages`, { token: bob.accessToken }), 404, 'not_found');
    expectError(await api.post(`/api/v1/agents/${bobsAgent}/chat`, { token: bob.accessToken, json: { message: 'hi', session_id: ids.session } }), 404, 'not_found');

    expect((await api.get(`/api/v1/agents/${agent}`, asAlice)).body).toMatchObject(VALID);
    expect((await api.get(`/api/v1/agents/${agent}/sessions/${ids.session}/messages`, asAlice)).body).toMatchObject({ total: 2 });
    expect((await api.get('/api/v1/memory', { ...asAlice, query: { agent_id: agent } })).body).toMatchObject({ total: 2 });
  });
});

describe('limits', () => {
  it('answers 413 for a body over 1 MiB', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const agentId = await createAgent(api, account);
    const tooLarge = await api.post('/api/v1/memory/documents', { token: account.accessToken, json: { agent_id: agentId, content: 'x'.repeat(1_100_000) } });
    expectError(tooLarge, 413, 'payload_too_large');
  });
});
