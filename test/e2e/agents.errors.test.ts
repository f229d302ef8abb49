import { streamChat, type AgentPlatformClient } from '@agent-platform/client';
import { describe, expect, it } from 'vitest';
import { Api, newAccount } from './harness/client.js';
import { expectError, expectStatus, refusalOf, type CallResult } from './harness/results.js';

// Bodies the contract forbids (fields missing or of the wrong type, malformed JSON) go raw, past
// the typed client, which would refuse them; everything else goes through it.

const VALID = { name: 'Support bot', type: 'support' };
const UNKNOWN = {
  agent: 'agt_01JD0000000000000000000000',
  session: 'ses_01JD0000000000000000000000',
  memory: 'mem_01JD0000000000000000000000',
  document: 'doc_01JD0000000000000000000000',
};

async function createAgent(client: AgentPlatformClient): Promise<string> {
  return expectStatus(await client.POST('/api/v1/agents', { body: VALID }), 201).id;
}

const agentPath = (agent_id: string) => ({ params: { path: { agent_id } } });

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
    const agentId = await createAgent(account.client);
    const patch = (body: { type?: string; config?: { temperature?: number } }) => account.client.PATCH('/api/v1/agents/{agent_id}', { ...agentPath(agentId), body });
    expectError(await patch({ config: { temperature: 9 } }), 422, 'validation_error', ['config.temperature']);
    expectError(await patch({ type: 'Two Words' }), 422, 'validation_error', ['type']);
    expectError(await api.request('PUT', `/api/v1/agents/${agentId}`, { token: account.accessToken, json: { name: 'Only a name' } }), 422, 'validation_error', ['type']);
    // Nothing changed.
    expect((await account.client.GET('/api/v1/agents/{agent_id}', agentPath(agentId))).data).toMatchObject({ ...VALID, config: {} });
  });

  it('answers 400 for malformed JSON and 422 for paging out of range', async () => {
    const api = new Api();
    const account = await newAccount(api);
    const agentId = await createAgent(account.client);
    const malformed = { token: account.accessToken, raw: '{"name": "x",', contentType: 'application/json' };
    expectError(await api.post('/api/v1/agents', malformed), 400, 'invalid_request');
    expectError(await api.patch(`/api/v1/agents/${agentId}`, malformed), 400, 'invalid_request');
    expectError(await api.post(`/api/v1/agents/${agentId}/chat`, malformed), 400, 'invalid_request');
    expectError(await api.post('/api/v1/memory', malformed), 400, 'invalid_request');
    expectError(await api.post('/api/v1/memory/search', malformed), 400, 'invalid_request');
    expectError(await account.client.GET('/api/v1/agents', { params: { query: { per_page: 0 } } }), 422, 'validation_error', ['per_page']);
  });
});

/** A call of every agent and memory operation that names an agent, a session, a memory item or a document. */
function everyOperation(client: AgentPlatformClient, ids: { agent: string; session: string; memory: string; document: string }): [string, () => Promise<CallResult>][] {
  const agent = agentPath(ids.agent);
  const session = { params: { path: { agent_id: ids.agent, session_id: ids.session } } };
  return [
    ['GET agent', () => client.GET('/api/v1/agents/{agent_id}', agent)],
    ['PATCH agent', () => client.PATCH('/api/v1/agents/{agent_id}', { ...agent, body: { name: 'x' } })],
    ['PUT agent', () => client.PUT('/api/v1/agents/{agent_id}', { ...agent, body: VALID })],
    ['DELETE agent', () => client.DELETE('/api/v1/agents/{agent_id}', agent)],
    ['POST chat', () => client.POST('/api/v1/agents/{agent_id}/chat', { ...agent, body: { message: 'hello' } })],
    ['GET sessions', () => client.GET('/api/v1/agents/{agent_id}/sessions', agent)],
    ['GET messages', () => client.GET('/api/v1/agents/{agent_id}/sessions/{session_id}/messages', session)],
    ['DELETE session', () => client.DELETE('/api/v1/agents/{agent_id}/sessions/{session_id}', session)],
    ['POST consolidate', () => client.POST('/api/v1/agents/{agent_id}/memory/consolidate', agent)],
    ['POST memory', () => client.POST('/api/v1/memory', { body: { agent_id: ids.agent, memory_type: 'semantic', content: 'x' } })],
    ['GET memory', () => client.GET('/api/v1/memory', { params: { query: { agent_id: ids.agent } } })],
    ['POST search', () => client.POST('/api/v1/memory/search', { body: { agent_id: ids.agent, query: 'x' } })],
    ['POST document', () => client.POST('/api/v1/memory/documents', { body: { agent_id: ids.agent, content: 'x' } })],
    ['DELETE memory', () => client.DELETE('/api/v1/memory/{memory_id}', { params: { path: { memory_id: ids.memory } } })],
    ['DELETE document', () => client.DELETE('/api/v1/memory/documents/{document_id}', { params: { path: { document_id: ids.document } } })],
  ];
}

function expectNotFound(operation: string, result: CallResult): void {
  expect(result.response.status, operation).toBe(404);
  expectError(result, 404, 'not_found');
}

describe('404 on every agent and memory route', () => {
  it('for ids that do not exist', async () => {
    const { client } = await newAccount(new Api());
    for (const [operation, call] of everyOperation(client, UNKNOWN)) expectNotFound(operation, await call());
    expectError(await refusalOf(streamChat(client, UNKNOWN.agent, { message: 'hi' })), 404, 'not_found');
  });

  it("for another tenant's agent, session, memory item and document, which stay untouched", async () => {
    const api = new Api();
    const [alice, bob] = [await newAccount(api), await newAccount(api)];
    const agent = await createAgent(alice.client);
    const chat = expectStatus(await alice.client.POST('/api/v1/agents/{agent_id}/chat', { ...agentPath(agent), body: { message: 'hello' } }));
    const memory = expectStatus(await alice.client.POST('/api/v1/memory', { body: { agent_id: agent, memory_type: 'semantic', content: 'A fact.' } }), 201);
    const document = expectStatus(await alice.client.POST('/api/v1/memory/documents', { body: { agent_id: agent, content: 'A manual.' } }), 201);
    const ids = { agent, session: chat.session_id, memory: memory.id, document: document.id };

    for (const [operation, call] of everyOperation(bob.client, ids)) expectNotFound(operation, await call());
    // Bob's own agent does not open Alice's session either.
    const bobsAgent = await createAgent(bob.client);
    const session = { params: { path: { agent_id: bobsAgent, session_id: ids.session } } };
    expectError(await bob.client.GET('/api/v1/agents/{agent_id}/sessions/{session_id}/messages', session), 404, 'not_found');
    expectError(await bob.client.POST('/api/v1/agents/{agent_id}/chat', { ...agentPath(bobsAgent), body: { message: 'hi', session_id: ids.session } }), 404, 'not_found');

    expect((await alice.client.GET('/api/v1/agents/{agent_id}', agentPath(agent))).data).toMatchObject(VALID);
    const messages = await alice.client.GET('/api/v1/agents/{agent_id}/sessions/{session_id}/messages', { params: { path: { agent_id: agent, session_id: ids.session } } });
    expect(messages.data).toMatchObject({ total: 2 });
    expect((await alice.client.GET('/api/v1/memory', { params: { query: { agent_id: agent } } })).data).toMatchObject({ total: 2 });
  });
});

describe('limits', () => {
  it('answers 413 for a body over 1 MiB', async () => {
    const { client } = await newAccount(new Api());
    const agentId = await createAgent(client);
    const tooLarge = await client.POST('/api/v1/memory/documents', { body: { agent_id: agentId, content: 'x'.repeat(1_100_000) } });
    expectError(tooLarge, 413, 'payload_too_large');
  });
});
