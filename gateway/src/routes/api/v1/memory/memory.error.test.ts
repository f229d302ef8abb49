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

const AGENT = 'agt_01JD0000000000000000000001';
const SEARCH = { agent_id: AGENT, query: 'anything' };

describe('request shapes the gateway refuses before any call', () => {
  it.each([
    ['POST /memory without its fields', '/api/v1/memory', {}, ['agent_id', 'memory_type', 'content']],
    ['POST /memory with metadata that is not an object', '/api/v1/memory', { agent_id: AGENT, memory_type: 'semantic', content: 'x', metadata: [1] }, ['metadata']],
    ['a search without agent_id and query', '/api/v1/memory/search', {}, ['agent_id', 'query']],
    ['top_k 0 (gRPC would read it as the default)', '/api/v1/memory/search', { ...SEARCH, top_k: 0 }, ['top_k']],
    ['top_k over 100 and not whole', '/api/v1/memory/search', { ...SEARCH, top_k: 100.5 }, ['top_k']],
    ['min_score outside 0..1', '/api/v1/memory/search', { ...SEARCH, min_score: 1.5 }, ['min_score']],
    ['a filter value that is an object or null', '/api/v1/memory/search', { ...SEARCH, filter: { a: { b: 1 }, c: null } }, ['filter.a', 'filter.c']],
    ['a document without content', '/api/v1/memory/documents', { agent_id: AGENT }, ['content']],
  ])('422 for %s', async (_label, url, payload, fields) => {
    const account = await newAccount(h.app);
    const before = h.agentMemory.calls.length;
    expectError(await as(h.app, account.token, { method: 'POST', url, payload }), 422, 'validation_error', fields);
    expect(h.agentMemory.calls).toHaveLength(before);
  });

  it('GET /memory: 422 without agent_id (a missing query parameter is not an unreadable one)', async () => {
    const account = await newAccount(h.app);
    const refused = expectError(await as(h.app, account.token, { method: 'GET', url: '/api/v1/memory' }), 422, 'validation_error', ['agent_id']);
    expect(refused.details?.[0]?.message).toBe('Required.');
  });

  it('POST /memory/search: 400 for malformed JSON', async () => {
    const account = await newAccount(h.app);
    const malformed = await as(h.app, account.token, { method: 'POST', url: '/api/v1/memory/search', headers: { 'content-type': 'application/json' }, payload: '{"agent_id"' });
    expectError(malformed, 400, 'invalid_request');
  });
});

describe("the service's answers", () => {
  it.each([
    ['addMemory', 'POST', '/api/v1/memory', { agent_id: AGENT, memory_type: 'semantic', content: 'x' }],
    ['searchMemory', 'POST', '/api/v1/memory/search', SEARCH],
    ['listMemory', 'GET', `/api/v1/memory?agent_id=${AGENT}`, undefined],
    ['deleteMemory', 'DELETE', '/api/v1/memory/mem_01JD0000000000000000000001', undefined],
    ['addDocument', 'POST', '/api/v1/memory/documents', { agent_id: AGENT, content: 'x' }],
    ['deleteDocument', 'DELETE', '/api/v1/memory/documents/doc_01JD0000000000000000000001', undefined],
    ['consolidateMemory', 'POST', `/api/v1/agents/${AGENT}/memory/consolidate`, undefined],
  ] as const)('%s: not_found passes through as 404', async (method, verb, url, payload) => {
    const account = await newAccount(h.app);
    h.agentMemory.faults.set(method, DomainError.notFound('Agent'));
    expectError(await as(h.app, account.token, { method: verb, url, ...(payload ? { payload } : {}) }), 404, 'not_found');
  });

  it("a memory_type the agent does not keep is the service's 422, passed on", async () => {
    const account = await newAccount(h.app);
    h.agentMemory.faults.set('addMemory', DomainError.validation([{ field: 'memory_type', message: "must be one of the agent's memory_types: semantic" }]));
    const refused = await as(h.app, account.token, { method: 'POST', url: '/api/v1/memory', payload: { agent_id: AGENT, memory_type: 'procedural', content: 'x' } });
    expectError(refused, 422, 'validation_error', ['memory_type']);
  });

  it('a model failure during consolidation is 502 with fixed text', async () => {
    const account = await newAccount(h.app);
    h.agentMemory.faults.set('consolidateMemory', new DomainError('upstream_error', 'LLM at http://10.0.0.5 refused'));
    const failed = await as(h.app, account.token, { method: 'POST', url: `/api/v1/agents/${AGENT}/memory/consolidate` });
    expect(expectError(failed, 502, 'upstream_error').message).not.toContain('10.0.0.5');
  });
});
