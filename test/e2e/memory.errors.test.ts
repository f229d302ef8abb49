import { describe, expect, it } from 'vitest';
import { Api, newAccount, newApiKey } from './harness/client.js';
import { expectError, expectStatus, statusOf, type Answer } from './harness/results.js';

// The validation tables send bodies the contract forbids (fields missing or of the wrong type,
// values outside its enums) among others, so they go raw, past the typed client; so do a missing
// agent_id and a page that is not a number.

function expect422(answer: Answer, fields: string[]): void {
  expectError(answer, 422, 'validation_error', fields);
}

/** An account with an agent that keeps only the memory types given. */
async function setUp(memoryTypes: string[]) {
  const api = new Api();
  const account = await newAccount(api);
  const created = await account.client.POST('/api/v1/agents', { body: { name: 'Keeper', type: 'assistant', memory_types: memoryTypes } });
  return { api, account, client: account.client, auth: { token: account.accessToken }, agentId: expectStatus(created, 201).id };
}

describe('POST /memory validation', () => {
  it.each([
    ['missing fields', {}, ['agent_id', 'memory_type', 'content']],
    ['empty content', { memory_type: 'semantic', content: '' }, ['content']],
    ['blank content', { memory_type: 'semantic', content: '  \n ' }, ['content']],
    ['content over 32,000 characters', { memory_type: 'semantic', content: 'c'.repeat(32_001) }, ['content']],
    ['a memory type the agent does not keep', { memory_type: 'procedural', content: 'x' }, ['memory_type']],
    ['a memory type that does not exist', { memory_type: 'long_term', content: 'x' }, ['memory_type']],
    ['metadata that is not an object', { memory_type: 'semantic', content: 'x', metadata: ['a'] }, ['metadata']],
  ])('answers 422 for %s', async (_label, json, fields) => {
    const { api, client, auth, agentId } = await setUp(['semantic', 'episodic']);
    const payload = Object.keys(json).length === 0 ? json : { agent_id: agentId, ...json };
    expect422(await api.post('/api/v1/memory', { ...auth, json: payload }), fields);
    expect((await client.GET('/api/v1/memory', { params: { query: { agent_id: agentId } } })).data).toMatchObject({ total: 0 });
  });
});

describe('POST /memory/search validation', () => {
  it.each([
    ['a missing query', {}, ['query']],
    ['an empty query', { query: '' }, ['query']],
    ['top_k 0', { query: 'q', top_k: 0 }, ['top_k']],
    ['top_k 101', { query: 'q', top_k: 101 }, ['top_k']],
    ['min_score above 1', { query: 'q', min_score: 1.01 }, ['min_score']],
    ['min_score below 0', { query: 'q', min_score: -0.5 }, ['min_score']],
    ['a filter value that is an object or a list', { query: 'q', filter: { a: { b: 1 }, c: [1] } }, ['filter.a', 'filter.c']],
    ['a filter that is not an object', { query: 'q', filter: 'team=billing' }, ['filter']],
    ['a memory type the agent does not keep', { query: 'q', memory_type: 'procedural' }, ['memory_type']],
  ])('answers 422 for %s', async (_label, json, fields) => {
    const { api, auth, agentId } = await setUp(['semantic', 'episodic']);
    expect422(await api.post('/api/v1/memory/search', { ...auth, json: { agent_id: agentId, ...json } }), fields);
  });
});

describe('GET /memory validation', () => {
  it('answers 422 without agent_id, and for paging out of range; 400 for paging that is not a number', async () => {
    const { api, client, auth, agentId } = await setUp(['semantic']);
    expect422(await api.get('/api/v1/memory', auth), ['agent_id']);
    expect422(await client.GET('/api/v1/memory', { params: { query: { agent_id: agentId, per_page: 101 } } }), ['per_page']);
    expectError(await api.get('/api/v1/memory', { ...auth, query: { agent_id: agentId, page: 'first' } }), 400, 'invalid_request');
  });
});

describe('documents and consolidation validation', () => {
  it('refuse an agent that keeps no semantic memory, naming agent_id', async () => {
    const { client, agentId } = await setUp(['episodic']);
    expect422(await client.POST('/api/v1/memory/documents', { body: { agent_id: agentId, content: 'A manual.' } }), ['agent_id']);
    expect422(await client.POST('/api/v1/agents/{agent_id}/memory/consolidate', { params: { path: { agent_id: agentId } } }), ['agent_id']);
  });

  it.each([
    ['a missing content', {}, ['content']],
    ['a blank content', { content: '   ' }, ['content']],
    ['a title over 500 characters', { content: 'x', title: 't'.repeat(501) }, ['title']],
    ['metadata that is not an object', { content: 'x', metadata: 3 }, ['metadata']],
  ])('POST /memory/documents answers 422 for %s', async (_label, json, fields) => {
    const { api, auth, agentId } = await setUp(['semantic']);
    expect422(await api.post('/api/v1/memory/documents', { ...auth, json: { agent_id: agentId, ...json } }), fields);
  });
});

describe('memory access', () => {
  it('lets a memory:read key search and list but not add; memory:write adds', async () => {
    const { api, account, agentId } = await setUp(['semantic']);
    const item = { agent_id: agentId, memory_type: 'semantic', content: 'x' } as const;
    const reader = (await newApiKey(api, account, ['memory:read'])).client;
    expect(await statusOf(reader.POST('/api/v1/memory/search', { body: { agent_id: agentId, query: 'q' } }))).toBe(200);
    expect(await statusOf(reader.GET('/api/v1/memory', { params: { query: { agent_id: agentId } } }))).toBe(200);
    expect(await statusOf(reader.POST('/api/v1/memory', { body: item }))).toBe(403);
    const writer = (await newApiKey(api, account, ['memory:write'])).client;
    expect(await statusOf(writer.POST('/api/v1/memory', { body: item }))).toBe(201);
  });
});
