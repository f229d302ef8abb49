import { DomainError } from '@agent-platform/kit';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { chatTurn, newAgent } from '../support/agents.js';
import { as, expectError, newAccount, startHarness, type Account, type Harness } from '../support/harness.js';

let h: Harness;
let owner: Account;
/** An agent of `owner`'s that keeps semantic memory only. */
let AGENT: string;
let SEARCH: { agent_id: string; query: string };
beforeAll(async () => {
  h = await startHarness();
  owner = await newAccount(h.app);
  AGENT = (await newAgent(h.app, owner.token, { memory_types: ['semantic'] })).id;
  SEARCH = { agent_id: AGENT, query: 'anything' };
});
afterEach(() => {
  h.agentMemory.heal();
});
afterAll(async () => {
  await h.close();
});

const ABSENT_AGENT = 'agt_01JD0000000000000000000000';

describe('request shapes the gateway refuses before any call', () => {
  it.each([
    ['POST /memory without its fields', '/api/v1/memory', () => ({}), ['agent_id', 'memory_type', 'content']],
    ['POST /memory with metadata that is not an object', '/api/v1/memory', () => ({ agent_id: AGENT, memory_type: 'semantic', content: 'x', metadata: [1] }), ['metadata']],
    ['a search without agent_id and query', '/api/v1/memory/search', () => ({}), ['agent_id', 'query']],
    ['top_k 0 (gRPC would read it as the default)', '/api/v1/memory/search', () => ({ ...SEARCH, top_k: 0 }), ['top_k']],
    ['top_k over 100 and not whole', '/api/v1/memory/search', () => ({ ...SEARCH, top_k: 100.5 }), ['top_k']],
    ['min_score outside 0..1', '/api/v1/memory/search', () => ({ ...SEARCH, min_score: 1.5 }), ['min_score']],
    ['a filter value that is an object or null', '/api/v1/memory/search', () => ({ ...SEARCH, filter: { a: { b: 1 }, c: null } }), ['filter.a', 'filter.c']],
    ['a document without content', '/api/v1/memory/documents', () => ({ agent_id: AGENT }), ['content']],
  ])('422 for %s', async (_label, url, payload, fields) => {
    const before = h.agentMemory.calls.length;
    expectError(await as(h.app, owner.token, { method: 'POST', url, payload: payload() }), 422, 'validation_error', fields);
    expect(h.agentMemory.calls).toHaveLength(before);
  });

  it('GET /memory: 422 without agent_id (a missing query parameter is not an unreadable one)', async () => {
    const before = h.agentMemory.calls.length;
    const refused = expectError(await as(h.app, owner.token, { method: 'GET', url: '/api/v1/memory' }), 422, 'validation_error', ['agent_id']);
    expect(refused.details?.[0]?.message).toBe('is required');
    expect(h.agentMemory.calls).toHaveLength(before);
  });

  it('POST /memory/search: 400 for malformed JSON', async () => {
    const before = h.agentMemory.calls.length;
    const malformed = await as(h.app, owner.token, { method: 'POST', url: '/api/v1/memory/search', headers: { 'content-type': 'application/json' }, payload: '{"agent_id"' });
    expectError(malformed, 400, 'invalid_request');
    expect(h.agentMemory.calls).toHaveLength(before);
  });
});

describe("the service's answers", () => {
  it("404 for another tenant's agent, item and document, as for an absent agent; they stay as they were", async () => {
    const intruder = await newAccount(h.app);
    const item = await as(h.app, owner.token, { method: 'POST', url: '/api/v1/memory', payload: { agent_id: AGENT, memory_type: 'semantic', content: 'Owned.' } });
    const document = await as(h.app, owner.token, { method: 'POST', url: '/api/v1/memory/documents', payload: { agent_id: AGENT, content: 'Owned text.' } });
    const [itemId, documentId] = [item.json<{ id: string }>().id, document.json<{ id: string }>().id];
    expect([item.statusCode, document.statusCode]).toEqual([201, 201]);
    const routes = (agentId: string) => [
      { method: 'POST' as const, url: '/api/v1/memory', payload: { agent_id: agentId, memory_type: 'semantic', content: 'x' } },
      { method: 'POST' as const, url: '/api/v1/memory/search', payload: { agent_id: agentId, query: 'owned' } },
      { method: 'GET' as const, url: `/api/v1/memory?agent_id=${agentId}` },
      { method: 'POST' as const, url: '/api/v1/memory/documents', payload: { agent_id: agentId, content: 'x' } },
      { method: 'POST' as const, url: `/api/v1/agents/${agentId}/memory/consolidate` },
      { method: 'GET' as const, url: `/api/v1/agents/${agentId}/sessions` },
    ];
    for (const route of [
      ...routes(AGENT),
      ...routes(ABSENT_AGENT),
      { method: 'DELETE' as const, url: `/api/v1/memory/${itemId}` },
      { method: 'DELETE' as const, url: `/api/v1/memory/documents/${documentId}` },
    ]) {
      expect(expectError(await as(h.app, intruder.token, route), 404, 'not_found').message, `${route.method} ${route.url}`).toMatch(/not found/);
    }
    const kept = await as(h.app, owner.token, { method: 'GET', url: '/api/v1/memory', query: { agent_id: AGENT } });
    expect(kept.json<{ items: { id: string; content: string }[] }>().items.map((entry) => entry.content).sort()).toEqual(['Owned text.', 'Owned.']);
  });

  it('a session of another agent is not found', async () => {
    const other = await newAgent(h.app, owner.token);
    const turn = await chatTurn(h.app, owner.token, other.id, 'hello');
    const url = `/api/v1/agents/${AGENT}/sessions/${turn.session_id}`;
    expectError(await as(h.app, owner.token, { method: 'GET', url: `${url}/messages` }), 404, 'not_found');
    expectError(await as(h.app, owner.token, { method: 'DELETE', url }), 404, 'not_found');
    expectError(await as(h.app, owner.token, { method: 'POST', url: `/api/v1/agents/${AGENT}/chat`, payload: { message: 'x', session_id: turn.session_id } }), 404, 'not_found');
  });

  it('422 naming memory_type for a type the agent does not keep, and naming content for blank content', async () => {
    const refused = await as(h.app, owner.token, { method: 'POST', url: '/api/v1/memory', payload: { agent_id: AGENT, memory_type: 'procedural', content: '   ' } });
    const body = expectError(refused, 422, 'validation_error', ['memory_type', 'content']);
    expect(body.details?.find((detail) => detail.field === 'memory_type')?.message).toBe("must be one of the agent's memory_types: semantic");
    const search = await as(h.app, owner.token, { method: 'POST', url: '/api/v1/memory/search', payload: { ...SEARCH, memory_type: 'episodic' } });
    expectError(search, 422, 'validation_error', ['memory_type']);
  });

  it('422 naming agent_id for a document or a consolidation of an agent without semantic memory', async () => {
    const episodic = await newAgent(h.app, owner.token, { memory_types: ['episodic'] });
    const document = await as(h.app, owner.token, { method: 'POST', url: '/api/v1/memory/documents', payload: { agent_id: episodic.id, content: 'Text.' } });
    expectError(document, 422, 'validation_error', ['agent_id']);
    expectError(await as(h.app, owner.token, { method: 'POST', url: `/api/v1/agents/${episodic.id}/memory/consolidate` }), 422, 'validation_error', ['agent_id']);
  });

  it('a model failure during consolidation is 502 with fixed text', async () => {
    h.agentMemory.inject('ConsolidateMemory', { fail: new DomainError('upstream_error', 'LLM at http://10.0.0.5 refused') });
    const failed = await as(h.app, owner.token, { method: 'POST', url: `/api/v1/agents/${AGENT}/memory/consolidate` });
    expect(expectError(failed, 502, 'upstream_error').message).toBe('An upstream service failed; retry later.');
    expect(failed.body).not.toContain('10.0.0.5');
  });
});
