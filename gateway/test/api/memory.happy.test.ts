import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chatTurn, newAgent } from '../support/agents.js';
import { ANY_NUMBER, as, ISO_MS, matching, newAccount, startHarness, type Account, type Harness } from '../support/harness.js';

let h: Harness;
beforeAll(async () => {
  // Consolidation on demand summarises every message, the newest included (the default keeps 20).
  h = await startHarness({ CONSOLIDATION_KEEP_MESSAGES: '0' });
});
afterAll(async () => {
  await h.close();
});

const MEMORY_ID = /^mem_[0-9A-HJKMNP-TV-Z]{26}$/;
const SESSION_ID = /^ses_[0-9A-HJKMNP-TV-Z]{26}$/;

interface Item {
  id: string;
  agent_id: string;
  memory_type: string;
  content: string;
  metadata: Record<string, unknown>;
  created_at: string;
}

interface Result {
  id: string;
  content: string;
  score: number;
  metadata: Record<string, unknown>;
}

async function remember(account: Account, agentId: string, content: string, fields: Record<string, unknown> = {}): Promise<Item> {
  const added = await as(h.app, account.token, { method: 'POST', url: '/api/v1/memory', payload: { agent_id: agentId, memory_type: 'semantic', content, ...fields } });
  if (added.statusCode !== 201) throw new Error(`memory: ${added.statusCode} ${added.body}`);
  return added.json<Item>();
}

async function search(account: Account, payload: Record<string, unknown>): Promise<Result[]> {
  const found = await as(h.app, account.token, { method: 'POST', url: '/api/v1/memory/search', payload });
  expect(found.statusCode, found.body).toBe(200);
  return found.json<{ results: Result[] }>().results;
}

async function listed(account: Account, query: Record<string, string>): Promise<{ items: Item[]; total: number }> {
  const answer = await as(h.app, account.token, { method: 'GET', url: '/api/v1/memory', query });
  expect(answer.statusCode, answer.body).toBe(200);
  return answer.json();
}

describe('POST /memory and GET /memory', () => {
  it('answers 201 with the item, metadata as sent; the list holds it', async () => {
    const account = await newAccount(h.app);
    const agent = await newAgent(h.app, account.token);
    const payload = { agent_id: agent.id, memory_type: 'episodic', content: 'Order ord_1234 shipped.', metadata: { order: 'ord_1234', urgent: true, nested: { n: 1 } } };
    const added = await as(h.app, account.token, { method: 'POST', url: '/api/v1/memory', payload });
    expect(added.statusCode, added.body).toBe(201);
    const item = added.json<Item>();
    expect(item).toEqual({ id: matching(MEMORY_ID), ...payload, user_id: null, created_at: matching(ISO_MS), updated_at: null });
    expect(await listed(account, { agent_id: agent.id })).toEqual({ items: [item], total: 1, page: 1, per_page: 20 });
  });

  it('lists newest first, by memory_type and page; absent metadata reads as {}', async () => {
    const account = await newAccount(h.app);
    const agent = await newAgent(h.app, account.token);
    const older = await remember(account, agent.id, 'The customer prefers e-mail.');
    const newer = await remember(account, agent.id, 'The customer lives in Lyon.');
    await remember(account, agent.id, 'Said hello.', { memory_type: 'episodic' });
    expect(older.metadata).toEqual({});

    const semantic = await as(h.app, account.token, { method: 'GET', url: '/api/v1/memory', query: { agent_id: agent.id, memory_type: 'semantic', per_page: '10' } });
    expect(semantic.json()).toEqual({ items: [newer, older], total: 2, page: 1, per_page: 10 });
    const paged = await as(h.app, account.token, { method: 'GET', url: '/api/v1/memory', query: { agent_id: agent.id, memory_type: 'semantic', page: '2', per_page: '1' } });
    expect(paged.json()).toEqual({ items: [older], total: 2, page: 2, per_page: 1 });
    expect((await listed(account, { agent_id: agent.id })).total).toBe(3);
  });
});

describe('POST /memory/search', () => {
  it('answers {results} best first with scores in [0, 1]; memory_type, filter, min_score and top_k apply', async () => {
    const account = await newAccount(h.app);
    const agent = await newAgent(h.app, account.token);
    const crm = await remember(account, agent.id, 'The customer prefers to be contacted by e-mail.', { metadata: { source: 'crm', level: 2, vip: false } });
    const erp = await remember(account, agent.id, 'The customer was contacted by phone about order ord_1234.', { metadata: { source: 'erp' } });
    await remember(account, agent.id, 'The customer wants to be contacted by e-mail only.', { memory_type: 'episodic', metadata: { source: 'crm' } });
    const query = 'how should the customer be contacted';

    const all = await search(account, { agent_id: agent.id, query, memory_type: 'semantic' });
    expect(all.map((result) => result.id).sort()).toEqual([crm.id, erp.id].sort());
    for (const result of all) {
      expect(result.score).toBeGreaterThan(0);
      expect(result.score).toBeLessThanOrEqual(1);
    }
    expect(all[0]!.score).toBeGreaterThanOrEqual(all[1]!.score);

    const filtered = await search(account, { agent_id: agent.id, query, memory_type: 'semantic', filter: { source: 'crm', level: 2, vip: false } });
    expect(filtered).toEqual([{ id: crm.id, content: crm.content, score: ANY_NUMBER, metadata: crm.metadata, memory_type: 'semantic', user_id: null, created_at: crm.created_at }]);
    // Equality with the type: the number 2 is not the text "2".
    expect(await search(account, { agent_id: agent.id, query, filter: { level: '2' } })).toEqual([]);

    expect(await search(account, { agent_id: agent.id, query, memory_type: 'semantic', top_k: 1 })).toEqual([all[0]]);
    expect(await search(account, { agent_id: agent.id, query, min_score: 1 })).toEqual([]);
    // Without memory_type: every type the agent keeps.
    expect(await search(account, { agent_id: agent.id, query })).toHaveLength(3);
  });

  it('answers at most 5 results without top_k (the service default)', async () => {
    const account = await newAccount(h.app);
    const agent = await newAgent(h.app, account.token);
    for (let n = 1; n <= 6; n += 1) await remember(account, agent.id, `Delivery note ${n} for the warehouse.`);
    expect(await search(account, { agent_id: agent.id, query: 'delivery note warehouse' })).toHaveLength(5);
    expect(await search(account, { agent_id: agent.id, query: 'delivery note warehouse', top_k: 6 })).toHaveLength(6);
  });
});

describe('DELETE /memory/{memory_id}, POST and DELETE /memory/documents', () => {
  it('deletes an item: it is gone from the list, and a second delete is 404', async () => {
    const account = await newAccount(h.app);
    const agent = await newAgent(h.app, account.token);
    const item = await remember(account, agent.id, 'Forget me.');
    const kept = await remember(account, agent.id, 'Keep me.');
    const deleted = await as(h.app, account.token, { method: 'DELETE', url: `/api/v1/memory/${item.id}` });
    expect(deleted.statusCode).toBe(200);
    expect(deleted.json()).toEqual({ success: true, message: matching(/\S/) });
    expect((await listed(account, { agent_id: agent.id })).items).toEqual([kept]);
    expect((await as(h.app, account.token, { method: 'DELETE', url: `/api/v1/memory/${item.id}` })).statusCode).toBe(404);
  });

  it('adds a document (title null when absent) as searchable chunks, and deletes it with them', async () => {
    const account = await newAccount(h.app);
    const agent = await newAgent(h.app, account.token);
    const content = 'Returns are accepted within thirty days of delivery. Refunds go to the original payment method.';
    const added = await as(h.app, account.token, { method: 'POST', url: '/api/v1/memory/documents', payload: { agent_id: agent.id, content, metadata: { lang: 'en' } } });
    expect(added.statusCode, added.body).toBe(201);
    const document = added.json<{ id: string; chunks: number }>();
    expect(document).toEqual({
      id: matching(/^doc_[0-9A-HJKMNP-TV-Z]{26}$/),
      agent_id: agent.id,
      title: null,
      source: 'text',
      status: 'ready',
      error: null,
      content_type: 'text/plain; charset=utf-8',
      filename: null,
      url: null,
      refresh_seconds: null,
      bytes: Buffer.byteLength(content),
      chunks: 1,
      pages: null,
      metadata: { lang: 'en' },
      user_id: null,
      created_at: matching(ISO_MS),
      refreshed_at: matching(ISO_MS),
    });

    const found = await search(account, { agent_id: agent.id, query: 'returns within thirty days' });
    expect(found).toEqual([expect.objectContaining({ content, metadata: { lang: 'en', document_id: document.id, chunk_index: 0 } })]);

    const deleted = await as(h.app, account.token, { method: 'DELETE', url: `/api/v1/memory/documents/${document.id}` });
    expect(deleted.statusCode, deleted.body).toBe(200);
    expect(deleted.json()).toEqual({ success: true, message: matching(/\S/) });
    expect(await search(account, { agent_id: agent.id, query: 'returns within thirty days' })).toEqual([]);
    expect((await listed(account, { agent_id: agent.id })).total).toBe(0);
  });
});

describe('sessions and consolidation of an agent', () => {
  it("lists sessions newest first, paged; lists a session's messages oldest first (usage null for the user's); deletes a session", async () => {
    const account = await newAccount(h.app);
    const agent = await newAgent(h.app, account.token);
    // A memory the first turn is given, and its session then shows.
    const stored = await as(h.app, account.token, { method: 'POST', url: '/api/v1/memory', payload: { agent_id: agent.id, memory_type: 'semantic', content: 'Say hello back.' } });
    expect(stored.statusCode, stored.body).toBe(201);
    const first = await chatTurn(h.app, account.token, agent.id, 'hello');
    expect(first.memories).toEqual([expect.objectContaining({ content: 'Say hello back.' })]);
    const second = await chatTurn(h.app, account.token, agent.id, 'hello again');
    await chatTurn(h.app, account.token, agent.id, 'more', second.session_id);
    const third = await chatTurn(h.app, account.token, agent.id, 'a third');
    const url = `/api/v1/agents/${agent.id}/sessions`;

    const sessions = await as(h.app, account.token, { method: 'GET', url, query: { page: '2', per_page: '2' } });
    expect(sessions.statusCode, sessions.body).toBe(200);
    expect(sessions.json()).toEqual({
      items: [{ id: first.session_id, created_at: matching(ISO_MS), last_message_at: first.created_at, message_count: 2, user_id: null }],
      total: 3,
      page: 2,
      per_page: 2,
    });
    const newest = await as(h.app, account.token, { method: 'GET', url, query: { per_page: '2' } });
    expect(newest.json()).toMatchObject({ items: [{ id: third.session_id }, { id: second.session_id, message_count: 4 }], total: 3 });

    const messages = await as(h.app, account.token, { method: 'GET', url: `${url}/${first.session_id}/messages` });
    expect(messages.json()).toEqual({
      items: [
        { id: matching(/^msg_/), role: 'user', content: 'hello', usage: null, status: null, tool_calls: [], tool_call_id: null, name: null, model: null, credits: null, memories: [], citations: [], run_id: first.run_id, created_at: matching(ISO_MS) },
        {
          id: first.id,
          role: 'assistant',
          content: first.content,
          usage: first.usage,
          status: 'completed',
          tool_calls: [],
          tool_call_id: null,
          name: null,
          model: first.model,
          credits: first.credits,
          memories: first.memories,
          citations: first.citations,
          run_id: first.run_id,
          created_at: first.created_at,
        },
      ],
      total: 2,
      page: 1,
      per_page: 20,
    });

    const deleted = await as(h.app, account.token, { method: 'DELETE', url: `${url}/${first.session_id}` });
    expect(deleted.json()).toEqual({ success: true, message: matching(/\S/) });
    expect((await as(h.app, account.token, { method: 'GET', url: `${url}/${first.session_id}/messages` })).statusCode).toBe(404);
    expect((await as(h.app, account.token, { method: 'GET', url })).json()).toMatchObject({ total: 2 });
  });

  it("consolidates the sessions' messages into semantic memory, once", async () => {
    const account = await newAccount(h.app);
    // Without extraction, whose facts would be semantic items too.
    const agent = await newAgent(h.app, account.token, { config: { memory_extraction: false } });
    const turn = await chatTurn(h.app, account.token, agent.id, 'My order number is ord_8F3K2.');
    await chatTurn(h.app, account.token, agent.id, 'Please send updates by e-mail.', turn.session_id);
    const url = `/api/v1/agents/${agent.id}/memory/consolidate`;

    const done = await as(h.app, account.token, { method: 'POST', url });
    expect(done.statusCode, done.body).toBe(200);
    expect(done.json()).toEqual({ agent_id: agent.id, items_in: 4, items_out: 1 });
    const summaries = await listed(account, { agent_id: agent.id, memory_type: 'semantic' });
    expect(summaries).toMatchObject({ items: [{ metadata: { source: 'consolidation', session_id: matching(SESSION_ID) } }], total: 1 });
    expect(summaries.items[0]!.metadata['session_id']).toBe(turn.session_id);

    expect((await as(h.app, account.token, { method: 'POST', url })).json()).toEqual({ agent_id: agent.id, items_in: 0, items_out: 0 });
  });
});
