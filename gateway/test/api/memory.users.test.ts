import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { newAgent, type ChatReply } from '../support/agents.js';
import { as, ISO_MS, matching, newAccount, startHarness, type Account, type Harness } from '../support/harness.js';

// decisions §14 through REST: end users, extraction, history, PATCH and bulk delete, on the real services.
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

interface Item {
  id: string;
  content: string;
  user_id: string | null;
  metadata: Record<string, unknown>;
  created_at: string;
  updated_at: string | null;
}

async function chatAs(account: Account, agentId: string, payload: Record<string, unknown>): Promise<ChatReply> {
  const answered = await as(h.app, account.token, { method: 'POST', url: `/api/v1/agents/${agentId}/chat`, payload });
  expect(answered.statusCode, answered.body).toBe(200);
  return answered.json<ChatReply>();
}

async function itemsOf(account: Account, query: Record<string, string>): Promise<Item[]> {
  const answer = await as(h.app, account.token, { method: 'GET', url: '/api/v1/memory', query });
  expect(answer.statusCode, answer.body).toBe(200);
  return answer.json<{ items: Item[] }>().items;
}

async function searchAs(account: Account, agentId: string, query: string, userId?: string): Promise<string[]> {
  const found = await as(h.app, account.token, { method: 'POST', url: '/api/v1/memory/search', payload: { agent_id: agentId, query, top_k: 10, ...(userId ? { user_id: userId } : {}) } });
  expect(found.statusCode, found.body).toBe(200);
  return found.json<{ results: { content: string }[] }>().results.map((result) => result.content);
}

describe('two end users of one agent', () => {
  it('each is remembered separately; a fact updated by a later turn keeps its history', async () => {
    const account = await newAccount(h.app);
    const agent = await newAgent(h.app, account.token);
    const ana = await chatAs(account, agent.id, { message: 'My dog is called Rex.', user_id: 'ana' });
    await chatAs(account, agent.id, { message: 'My dog is called Bolt.', user_id: 'ben' });

    // Extraction runs after the reply: the sentinel is the item appearing.
    const anas = await vi.waitFor(
      async () => {
        const items = await itemsOf(account, { agent_id: agent.id, user_id: 'ana' });
        expect(items.map((item) => item.content)).toEqual(['My dog is called Rex.']);
        return items;
      },
      { timeout: 10_000, interval: 50 },
    );
    expect(anas[0]).toMatchObject({ user_id: 'ana', metadata: { source: 'extraction', session_id: ana.session_id }, updated_at: null });
    expect(await searchAs(account, agent.id, 'dog called', 'ben')).not.toContain('My dog is called Rex.');
    expect(await searchAs(account, agent.id, 'dog called', 'ana')).toContain('My dog is called Rex.');
    const benTurn = await chatAs(account, agent.id, { message: 'What do you know about my dog?', user_id: 'ben' });
    expect(benTurn.content).not.toContain('Rex');

    // A later turn saying the same again updates the item (the offline model's rule).
    await chatAs(account, agent.id, { message: 'My dog is called Rex', session_id: ana.session_id });
    const history = await vi.waitFor(
      async () => {
        const answer = await as(h.app, account.token, { method: 'GET', url: `/api/v1/memory/${anas[0]!.id}/history` });
        expect(answer.statusCode, answer.body).toBe(200);
        const body = answer.json<{ memory_id: string; history: Record<string, unknown>[] }>();
        expect(body.history).toHaveLength(2);
        return body;
      },
      { timeout: 10_000, interval: 50 },
    );
    expect(history).toEqual({
      memory_id: anas[0]!.id,
      history: [
        { event: 'ADD', old_content: null, new_content: 'My dog is called Rex.', source: 'extraction', session_id: ana.session_id, created_at: matching(ISO_MS) },
        { event: 'UPDATE', old_content: 'My dog is called Rex.', new_content: 'My dog is called Rex', source: 'extraction', session_id: ana.session_id, created_at: matching(ISO_MS) },
      ],
    });

    // Forgetting an end user: their items leave search at once; the other's stay.
    const bulk = await as(h.app, account.token, { method: 'DELETE', url: '/api/v1/memory', query: { agent_id: agent.id, user_id: 'ana' } });
    expect(bulk.statusCode, bulk.body).toBe(200);
    expect(bulk.json()).toEqual({ deleted: 1 });
    expect(await searchAs(account, agent.id, 'dog called')).toEqual(['My dog is called Bolt.']);
  });

  it("a session is one end user's: naming another is 422 on user_id", async () => {
    const account = await newAccount(h.app);
    const agent = await newAgent(h.app, account.token, { config: { memory_extraction: false } });
    expect(agent.config).toEqual({ memory_extraction: false });
    const first = await chatAs(account, agent.id, { message: 'Hello', user_id: 'ana' });
    const refused = await as(h.app, account.token, { method: 'POST', url: `/api/v1/agents/${agent.id}/chat`, payload: { message: 'Hi', session_id: first.session_id, user_id: 'ben' } });
    expect(refused.statusCode).toBe(422);
    expect(refused.json<{ details: { field: string }[] }>().details.map((detail) => detail.field)).toEqual(['user_id']);
    const sessions = await as(h.app, account.token, { method: 'GET', url: `/api/v1/agents/${agent.id}/sessions` });
    expect(sessions.json<{ items: { user_id: string | null }[] }>().items.map((session) => session.user_id)).toEqual(['ana']);
  });
});

describe('PATCH /memory/{memory_id} and history', () => {
  it('changes content and metadata, recorded in history, which outlives the item', async () => {
    const account = await newAccount(h.app);
    const agent = await newAgent(h.app, account.token);
    const added = await as(h.app, account.token, { method: 'POST', url: '/api/v1/memory', payload: { agent_id: agent.id, memory_type: 'semantic', content: 'Prefers tea.', user_id: 'ana' } });
    expect(added.statusCode, added.body).toBe(201);
    const item = added.json<Item>();
    expect(item).toMatchObject({ user_id: 'ana', updated_at: null });

    const patched = await as(h.app, account.token, { method: 'PATCH', url: `/api/v1/memory/${item.id}`, payload: { content: 'Prefers coffee.', metadata: { by: 'crm' } } });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(patched.json()).toEqual({ ...item, content: 'Prefers coffee.', metadata: { by: 'crm' }, updated_at: matching(ISO_MS) });
    expect(await searchAs(account, agent.id, 'coffee', 'ana')).toEqual(['Prefers coffee.']);

    const empty = await as(h.app, account.token, { method: 'PATCH', url: `/api/v1/memory/${item.id}`, payload: {} });
    expect(empty.statusCode).toBe(422);
    const stranger = await newAccount(h.app);
    for (const request of [
      { method: 'PATCH' as const, url: `/api/v1/memory/${item.id}`, payload: { content: 'x' } },
      { method: 'GET' as const, url: `/api/v1/memory/${item.id}/history` },
    ]) {
      expect((await as(h.app, stranger.token, request)).statusCode).toBe(404);
    }

    expect((await as(h.app, account.token, { method: 'DELETE', url: `/api/v1/memory/${item.id}` })).statusCode).toBe(200);
    const history = await as(h.app, account.token, { method: 'GET', url: `/api/v1/memory/${item.id}/history` });
    expect(history.json<{ history: { event: string; source: string }[] }>().history.map((entry) => `${entry.event} ${entry.source}`)).toEqual(['ADD api', 'UPDATE api', 'DELETE api']);
  });

  it('bulk delete needs agent_id and checks its filters', async () => {
    const account = await newAccount(h.app);
    const agent = await newAgent(h.app, account.token);
    expect((await as(h.app, account.token, { method: 'DELETE', url: '/api/v1/memory' })).statusCode).toBe(422);
    expect((await as(h.app, account.token, { method: 'DELETE', url: '/api/v1/memory', query: { agent_id: agent.id, memory_type: 'procedural' } })).statusCode).toBe(422);
    const stranger = await newAccount(h.app);
    expect((await as(h.app, stranger.token, { method: 'DELETE', url: '/api/v1/memory', query: { agent_id: agent.id } })).statusCode).toBe(404);
  });
});

describe('POST /agents/{agent_id}/memory/consolidate', () => {
  it('consolidates a short conversation at once, newest messages included; keep_messages overrides', async () => {
    const account = await newAccount(h.app);
    const agent = await newAgent(h.app, account.token, { config: { memory_extraction: false } });
    await chatAs(account, agent.id, { message: 'Hello', user_id: 'ana' });
    const consolidate = (payload?: Record<string, unknown>) =>
      as(h.app, account.token, { method: 'POST', url: `/api/v1/agents/${agent.id}/memory/consolidate`, ...(payload ? { payload } : {}) });
    const kept = await consolidate({ keep_messages: 2 });
    expect(kept.json()).toEqual({ agent_id: agent.id, items_in: 0, items_out: 0 });
    const all = await consolidate();
    expect(all.statusCode, all.body).toBe(200);
    expect(all.json()).toEqual({ agent_id: agent.id, items_in: 2, items_out: 1 });
    expect((await itemsOf(account, { agent_id: agent.id, user_id: 'ana' })).map((item) => item.metadata['source'])).toEqual(['consolidation']);
    expect((await consolidate({ keep_messages: -1 })).statusCode).toBe(422);
  });
});
