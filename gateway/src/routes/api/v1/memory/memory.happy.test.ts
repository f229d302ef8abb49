import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { as, newAccount, startHarness, type Harness } from '../../../../testing/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

const AGENT = 'agt_01JD0000000000000000000001';
const CREATED_AT = '2026-01-02T03:04:05.006Z';

describe('POST /memory', () => {
  it('answers 201 with the item and forwards metadata as JSON text', async () => {
    const account = await newAccount(h.app);
    const payload = { agent_id: AGENT, memory_type: 'episodic', content: 'Order ord_1234 shipped.', metadata: { order: 'ord_1234', urgent: true } };
    const added = await as(h.app, account.token, { method: 'POST', url: '/api/v1/memory', payload });
    expect(added.statusCode, added.body).toBe(201);
    expect(added.json()).toEqual({
      id: 'mem_01JD0000000000000000000001',
      agent_id: AGENT,
      memory_type: 'episodic',
      content: 'Order ord_1234 shipped.',
      metadata: { order: 'ord_1234', urgent: true },
      created_at: CREATED_AT,
    });
    expect(h.agentMemory.lastRequest('addMemory')).toEqual({ agentId: AGENT, memoryType: 'episodic', content: payload.content, metadataJson: JSON.stringify(payload.metadata) });
  });
});

describe('GET /memory', () => {
  it('answers a page of items; empty metadata text reads as {}', async () => {
    const account = await newAccount(h.app);
    const listed = await as(h.app, account.token, { method: 'GET', url: '/api/v1/memory', query: { agent_id: AGENT, memory_type: 'semantic', per_page: '10' } });
    expect(listed.statusCode, listed.body).toBe(200);
    expect(listed.json()).toEqual({
      items: [{ id: 'mem_01JD0000000000000000000001', agent_id: AGENT, memory_type: 'semantic', content: 'The customer prefers e-mail.', metadata: {}, created_at: CREATED_AT }],
      total: 1,
      page: 1,
      per_page: 10,
    });
    expect(h.agentMemory.lastRequest('listMemory')).toEqual({ agentId: AGENT, memoryType: 'semantic', page: { page: 1, perPage: 10 } });
  });
});

describe('POST /memory/search', () => {
  it('answers {results} with score and forwards top_k, min_score and filter', async () => {
    const account = await newAccount(h.app);
    const payload = { agent_id: AGENT, query: 'how to contact', memory_type: 'semantic', top_k: 3, min_score: 0.25, filter: { source: 'crm', level: 2, vip: false } };
    const found = await as(h.app, account.token, { method: 'POST', url: '/api/v1/memory/search', payload });
    expect(found.statusCode, found.body).toBe(200);
    expect(found.json()).toEqual({
      results: [{ id: 'mem_01JD0000000000000000000001', content: 'The customer prefers e-mail.', score: 0.75, metadata: { source: 'crm' }, memory_type: 'semantic', created_at: CREATED_AT }],
    });
    expect(h.agentMemory.lastRequest('searchMemory')).toEqual({
      agentId: AGENT,
      query: 'how to contact',
      memoryType: 'semantic',
      topK: 3,
      minScore: 0.25,
      filterJson: JSON.stringify(payload.filter),
    });
  });

  it('sends top_k 0 (the service default, 5) when it is absent', async () => {
    const account = await newAccount(h.app);
    await as(h.app, account.token, { method: 'POST', url: '/api/v1/memory/search', payload: { agent_id: AGENT, query: 'q' } });
    expect(h.agentMemory.lastRequest('searchMemory')).toEqual({ agentId: AGENT, query: 'q', topK: 0 });
  });
});

describe('DELETE /memory/{memory_id}, POST and DELETE /memory/documents', () => {
  it('deletes an item', async () => {
    const account = await newAccount(h.app);
    const deleted = await as(h.app, account.token, { method: 'DELETE', url: '/api/v1/memory/mem_01JD0000000000000000000001' });
    expect(deleted.json()).toEqual({ success: true, message: expect.any(String) as unknown });
    expect(h.agentMemory.lastRequest('deleteMemory')).toEqual({ memoryId: 'mem_01JD0000000000000000000001' });
  });

  it('adds a document (title null when absent) and deletes it, not taking "documents" for a memory id', async () => {
    const account = await newAccount(h.app);
    const added = await as(h.app, account.token, { method: 'POST', url: '/api/v1/memory/documents', payload: { agent_id: AGENT, content: 'Long text.', metadata: { lang: 'en' } } });
    expect(added.statusCode).toBe(201);
    expect(added.json()).toEqual({ id: 'doc_01JD0000000000000000000001', agent_id: AGENT, title: null, chunks: 3, created_at: CREATED_AT });
    expect(h.agentMemory.lastRequest('addDocument')).toEqual({ agentId: AGENT, content: 'Long text.', metadataJson: '{"lang":"en"}' });
    const deleted = await as(h.app, account.token, { method: 'DELETE', url: '/api/v1/memory/documents/doc_01JD0000000000000000000001' });
    expect(deleted.json()).toMatchObject({ success: true });
    expect(h.agentMemory.lastRequest('deleteDocument')).toEqual({ documentId: 'doc_01JD0000000000000000000001' });
  });
});

describe('sessions and consolidation of an agent', () => {
  it('lists sessions (last_message_at null when none) and messages (usage null for the user\'s)', async () => {
    const account = await newAccount(h.app);
    const sessions = await as(h.app, account.token, { method: 'GET', url: `/api/v1/agents/${AGENT}/sessions`, query: { page: '2', per_page: '2' } });
    expect(sessions.json()).toEqual({
      items: [
        { id: 'ses_01JD0000000000000000000002', created_at: CREATED_AT, last_message_at: '2026-01-02T03:04:06.007Z', message_count: 2 },
        { id: 'ses_01JD0000000000000000000001', created_at: CREATED_AT, last_message_at: null, message_count: 0 },
      ],
      total: 7,
      page: 2,
      per_page: 2,
    });
    expect(h.agentMemory.lastRequest('listSessions')).toEqual({ agentId: AGENT, page: { page: 2, perPage: 2 } });
    const session = 'ses_01JD0000000000000000000002';
    const messages = await as(h.app, account.token, { method: 'GET', url: `/api/v1/agents/${AGENT}/sessions/${session}/messages` });
    expect(messages.json()).toEqual({
      items: [
        { id: 'msg_01JD0000000000000000000001', role: 'user', content: 'hello', usage: null, created_at: '2026-01-02T03:04:05.000Z' },
        { id: 'msg_01JD0000000000000000000002', role: 'assistant', content: 'You said: hello', usage: { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 }, created_at: CREATED_AT },
      ],
      total: 2,
      page: 1,
      per_page: 20,
    });
    const deleted = await as(h.app, account.token, { method: 'DELETE', url: `/api/v1/agents/${AGENT}/sessions/${session}` });
    expect(deleted.json()).toMatchObject({ success: true });
    expect(h.agentMemory.lastRequest('deleteSession')).toEqual({ agentId: AGENT, sessionId: session });
  });

  it('consolidates', async () => {
    const account = await newAccount(h.app);
    const done = await as(h.app, account.token, { method: 'POST', url: `/api/v1/agents/${AGENT}/memory/consolidate` });
    expect(done.statusCode).toBe(200);
    expect(done.json()).toEqual({ agent_id: AGENT, items_in: 4, items_out: 1 });
  });
});
