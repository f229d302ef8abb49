import type { MemoryItem, MemorySearchResult, RequestBody } from '@agent-platform/client';
import { describe, expect, it } from 'vitest';
import { Api, ISO_MS, id, newAccount } from './harness/client.js';
import { expectStatus, statusOf } from './harness/results.js';

type MemoryType = 'semantic' | 'episodic' | 'procedural';
type SearchOptions = Omit<RequestBody<'/api/v1/memory/search', 'post'>, 'agent_id' | 'query'>;

const ALL_TYPES: MemoryType[] = ['semantic', 'episodic', 'procedural'];

/** An account with one agent keeping every memory type, and helpers acting as its owner. */
async function setUp(memoryTypes: MemoryType[] = ALL_TYPES) {
  const { client } = await newAccount(new Api());
  // Without extraction (decisions §14.2): what memory holds here is only what a test puts there.
  const agentId = expectStatus(
    await client.POST('/api/v1/agents', { body: { name: 'Librarian', type: 'assistant', memory_types: memoryTypes, config: { memory_extraction: false } } }),
    201,
  ).id;
  return {
    client,
    agentId,
    async add(content: string, fields: { memory_type?: MemoryType; metadata?: Record<string, unknown> } = {}): Promise<MemoryItem> {
      return expectStatus(await client.POST('/api/v1/memory', { body: { agent_id: agentId, memory_type: 'semantic', content, ...fields } }), 201);
    },
    async search(query: string, options: SearchOptions = {}): Promise<MemorySearchResult[]> {
      return expectStatus(await client.POST('/api/v1/memory/search', { body: { agent_id: agentId, query, ...options } })).results;
    },
    async list(query: { memory_type?: MemoryType; page?: number; per_page?: number } = {}) {
      return expectStatus(await client.GET('/api/v1/memory', { params: { query: { agent_id: agentId, ...query } } }));
    },
    deleteItem(memoryId: string) {
      return client.DELETE('/api/v1/memory/{memory_id}', { params: { path: { memory_id: memoryId } } });
    },
    deleteDocument(documentId: string) {
      return client.DELETE('/api/v1/memory/documents/{document_id}', { params: { path: { document_id: documentId } } });
    },
  };
}

function expectRanked(results: MemorySearchResult[]): void {
  for (const result of results) expect(result.score >= 0 && result.score <= 1, `score ${result.score}`).toBe(true);
  expect(results.map((result) => result.score)).toEqual([...results.map((result) => result.score)].sort((a, b) => b - a));
}

describe('memory items', () => {
  it('are added with their metadata and listed newest first, by type and page', async () => {
    const memory = await setUp();
    const first = await memory.add('The customer prefers e-mail.', { metadata: { source: 'crm', confidence: 0.9 } });
    expect(first).toEqual({
      id: expect.stringMatching(id('mem')),
      agent_id: memory.agentId,
      memory_type: 'semantic',
      content: 'The customer prefers e-mail.',
      metadata: { source: 'crm', confidence: 0.9 },
      user_id: null,
      created_at: expect.stringMatching(ISO_MS),
      updated_at: null,
    });
    const second = await memory.add('Called on Monday about a refund.', { memory_type: 'episodic' });
    expect(second.metadata).toEqual({});
    const third = await memory.add('Refunds: check the order, then the payment.', { memory_type: 'procedural' });

    expect(await memory.list()).toEqual({ items: [third, second, first], total: 3, page: 1, per_page: 20 });
    expect(await memory.list({ memory_type: 'episodic' })).toMatchObject({ items: [second], total: 1 });
    expect(await memory.list({ per_page: 2, page: 2 })).toMatchObject({ items: [first], total: 3, page: 2, per_page: 2 });
  });

  it('are deleted, and then neither listed nor found', async () => {
    const memory = await setUp();
    const item = await memory.add('Parcel zx81q was lost in transit.');
    expect((await memory.search('zx81q')).map((result) => result.id)).toContain(item.id);
    expect(expectStatus(await memory.deleteItem(item.id))).toEqual({ success: true, message: expect.any(String) });
    expect((await memory.search('zx81q')).map((result) => result.id)).not.toContain(item.id);
    expect(await memory.list()).toMatchObject({ items: [], total: 0 });
    expect(await statusOf(memory.deleteItem(item.id))).toBe(404);
  });
});

describe('memory search', () => {
  it('finds an exact identifier or rare word first, best first, with scores in [0, 1]', async () => {
    const memory = await setUp();
    const order = await memory.add('Order ord_8F3K2 shipped to Berlin on 3 May.');
    await memory.add('Invoice inv_7QX9 for the Berlin office is overdue.');
    await memory.add('Orders to Berlin usually ship within two days.');
    const preference = await memory.add('The customer prefers a callback in the afternoon.');
    await memory.add('Our support line opens at nine.');

    const byId = await memory.search('ord_8F3K2');
    const { agent_id: _agent, updated_at: _updated, ...result } = order;
    expect(byId[0]).toEqual({ ...result, score: expect.any(Number) });
    expectRanked(byId);

    const byWords = await memory.search('when does the customer prefer a callback');
    expect(byWords[0]?.id).toBe(preference.id);
    expectRanked(byWords);
  });

  it('returns at most top_k results, 5 by default', async () => {
    const memory = await setUp();
    for (let n = 1; n <= 8; n += 1) await memory.add(`Warehouse note ${n}: pallets of widgets arrived.`);
    expect(await memory.search('widgets pallets')).toHaveLength(5);
    expect(await memory.search('widgets pallets', { top_k: 3 })).toHaveLength(3);
    expect(await memory.search('widgets pallets', { top_k: 100 })).toHaveLength(8);
  });

  it('drops results below min_score', async () => {
    const memory = await setUp();
    await memory.add('The blue van delivers to Lyon.');
    await memory.add('The blue van needs new tyres.');
    await memory.add('Lyon office closes early on Fridays.');
    await memory.add('Coffee machine repaired.');
    const all = await memory.search('blue van Lyon', { top_k: 10 });
    expect(all.length).toBeGreaterThan(1);
    const threshold = all[1]!.score;
    const strong = await memory.search('blue van Lyon', { top_k: 10, min_score: threshold });
    expect(strong.map((result) => result.id)).toEqual(all.filter((result) => result.score >= threshold).map((result) => result.id));
    expect(strong.every((result) => result.score >= threshold)).toBe(true);
    expect(await memory.search('blue van Lyon', { min_score: 1 })).toEqual(all.filter((result) => result.score >= 1));
  });

  it('filters on metadata equality, value types included', async () => {
    const memory = await setUp();
    const billing = await memory.add('Refund policy: 30 days.', { metadata: { team: 'billing', priority: 2, vip: true } });
    const billingLow = await memory.add('Refund forms live in the shared drive.', { metadata: { team: 'billing', priority: 1, vip: false } });
    await memory.add('Refund escalations go to the support lead.', { metadata: { team: 'support', priority: 2, vip: true } });

    const ids = async (filter: SearchOptions['filter']) => (await memory.search('refund', { filter, top_k: 10 })).map((result) => result.id).sort();
    expect(await ids({ team: 'billing' })).toEqual([billing.id, billingLow.id].sort());
    expect(await ids({ team: 'billing', priority: 2, vip: true })).toEqual([billing.id]);
    expect(await ids({ vip: 'true' })).toEqual([]);
    expect(await ids({ team: 'nobody' })).toEqual([]);
  });

  it('searches one memory type when asked, else every type the agent keeps', async () => {
    const memory = await setUp();
    const semantic = await memory.add('Kiwi shipments need cooling.', { memory_type: 'semantic' });
    const episodic = await memory.add('Yesterday a kiwi shipment arrived warm.', { memory_type: 'episodic' });
    const procedural = await memory.add('To ship kiwi: pack with ice, label fragile.', { memory_type: 'procedural' });
    expect((await memory.search('kiwi shipment', { memory_type: 'episodic' })).map((result) => result.id)).toEqual([episodic.id]);
    const everything = await memory.search('kiwi shipment');
    expect(everything.map((result) => result.id).sort()).toEqual([semantic.id, episodic.id, procedural.id].sort());
    expect(everything.find((result) => result.id === procedural.id)?.memory_type).toBe('procedural');
  });
});

describe('documents', () => {
  const paragraph = (topic: string, marker: string) =>
    `${topic} ${marker}. ` + `This paragraph explains ${topic.toLowerCase()} in enough detail to fill a chunk of its own. `.repeat(8);

  it('are chunked into semantic items carrying metadata.document_id, and deleted with them', async () => {
    const memory = await setUp();
    const content = [paragraph('Installing the device', 'qv7install'), paragraph('Cleaning the filter', 'qv7filter'), paragraph('Resetting the unit', 'qv7reset')].join('\n\n');
    const added = expectStatus(
      await memory.client.POST('/api/v1/memory/documents', { body: { agent_id: memory.agentId, title: 'Device manual', content, metadata: { product: 'qv7' } } }),
      201,
    );
    expect(added).toEqual({
      id: expect.stringMatching(id('doc')),
      agent_id: memory.agentId,
      title: 'Device manual',
      source: 'text',
      status: 'ready',
      error: null,
      content_type: 'text/plain; charset=utf-8',
      filename: null,
      url: null,
      refresh_seconds: null,
      bytes: Buffer.byteLength(content),
      chunks: expect.any(Number),
      pages: null,
      metadata: { product: 'qv7' },
      user_id: null,
      created_at: expect.stringMatching(ISO_MS),
      refreshed_at: added.created_at,
    });
    const documentId = added.id;
    expect(added.chunks).toBeGreaterThanOrEqual(3);

    const chunks = await memory.list({ memory_type: 'semantic', per_page: 100 });
    expect(chunks.total).toBe(added.chunks);
    for (const chunk of chunks.items) {
      expect(chunk.metadata).toMatchObject({ document_id: documentId, product: 'qv7', chunk_index: expect.any(Number) });
    }
    expect(chunks.items.map((chunk) => chunk.metadata['chunk_index']).sort()).toEqual([...Array(added.chunks).keys()]);

    const found = await memory.search('qv7filter');
    expect(found[0]?.content).toContain('qv7filter');
    expect(found[0]?.metadata['document_id']).toBe(documentId);
    expect(await memory.search('device', { filter: { document_id: documentId }, top_k: 100 })).toHaveLength(added.chunks);

    const kept = await memory.add('A note outside the manual about qv7filter stock.');
    expect(expectStatus(await memory.deleteDocument(documentId))).toEqual({ success: true, message: expect.any(String) });
    const after = await memory.search('qv7filter', { top_k: 100 });
    expect(after.map((result) => result.id)).toEqual([kept.id]);
    expect(await memory.list()).toMatchObject({ total: 1, items: [kept] });
    expect(await statusOf(memory.deleteDocument(documentId))).toBe(404);
  });

  it('have a null title when none is given', async () => {
    const memory = await setUp(['semantic']);
    const added = await memory.client.POST('/api/v1/memory/documents', { body: { agent_id: memory.agentId, content: 'One short line.' } });
    expect(expectStatus(added, 201)).toMatchObject({ title: null, chunks: 1 });
  });
});

describe('consolidation', () => {
  it("summarises a session's older messages into a semantic item, once", { timeout: 60_000 }, async () => {
    const memory = await setUp(['semantic', 'episodic']);
    const agent = { params: { path: { agent_id: memory.agentId } } };
    const consolidate = async (body?: { keep_messages: number }) =>
      expectStatus(await memory.client.POST('/api/v1/agents/{agent_id}/memory/consolidate', { ...agent, ...(body ? { body } : {}) }));
    expect(await consolidate()).toEqual({ agent_id: memory.agentId, items_in: 0, items_out: 0 });

    // 11 turns = 22 messages; keep_messages leaves the newest 20 as they are, as the periodic job does.
    let sessionId: string | undefined;
    for (let turn = 1; turn <= 11; turn += 1) {
      const message = `Fact number ${turn}: my locker code is ${1000 + turn}.`;
      const reply = await memory.client.POST('/api/v1/agents/{agent_id}/chat', { ...agent, body: { message, ...(sessionId ? { session_id: sessionId } : {}) } });
      sessionId = expectStatus(reply).session_id;
    }
    expect(await consolidate({ keep_messages: 20 })).toEqual({ agent_id: memory.agentId, items_in: 2, items_out: 1 });
    const summaries = await memory.list({ memory_type: 'semantic' });
    expect(summaries.items).toHaveLength(1);
    expect(summaries.items[0]?.metadata).toMatchObject({ source: 'consolidation', session_id: sessionId });
    expect(await consolidate({ keep_messages: 20 })).toEqual({ agent_id: memory.agentId, items_in: 0, items_out: 0 });
    // Without it, the newest are consolidated too: nothing is left.
    expect(await consolidate()).toEqual({ agent_id: memory.agentId, items_in: 20, items_out: 1 });
    expect(await consolidate()).toEqual({ agent_id: memory.agentId, items_in: 0, items_out: 0 });
  });
});
