import type { Agent } from '@agent-platform/proto/agents/v1/agents';
import { describe, expect, vi } from 'vitest';
import { agentMemoryTest, expectError, newTenant, type AgentMemoryHarness, type TestTenant } from './support/harness.js';

// decisions §14: end users, history, PATCH, bulk delete and consolidation, on the offline model.
const test = agentMemoryTest();

/** A validation_error naming `field`. */
async function expectInvalid(promise: Promise<unknown>, field: string): Promise<void> {
  const error = await expectError(promise, 'validation_error');
  expect(error.details.map((detail) => detail.field)).toContain(field);
}

/** Waits until every queued extraction of the agent is done (the sentinel: the queue's rows). */
async function extracted(service: AgentMemoryHarness, agentId: string): Promise<void> {
  await vi.waitFor(
    async () => {
      const rows = await service.database.query<{ status: string }>(`select "status" from "memory_extractions" where "agent_id" = $1`, [agentId]);
      expect(rows.length).toBeGreaterThan(0);
      expect(rows.every((row) => row.status === 'done')).toBe(true);
    },
    { timeout: 10_000, interval: 50 },
  );
}

async function chatAs(service: AgentMemoryHarness, tenant: TestTenant, agent: Agent, userId: string | undefined, message: string, sessionId?: string) {
  return service.chat.chat({ agentId: agent.id, message, sessionId, userId }, { principal: tenant.principal });
}

async function contentsFor(service: AgentMemoryHarness, tenant: TestTenant, agentId: string, userId: string | undefined): Promise<string[]> {
  const { items } = await service.memory.listMemory({ agentId, userId, page: { page: 1, perPage: 100 } }, { principal: tenant.principal });
  return items.map((item) => item.content).sort();
}

describe('end users of one agent', () => {
  test("a fact told by one end user never reaches another's turn or search", async ({ service }) => {
    const tenant = newTenant();
    const agent = await service.createAgent(tenant);
    await chatAs(service, tenant, agent, 'alice', 'My favourite colour is teal.');
    await extracted(service, agent.id);
    expect(await contentsFor(service, tenant, agent.id, 'alice')).toEqual(['My favourite colour is teal.']);

    // Alice's own later turn is given the fact (the offline model quotes its memories)…
    const own = await chatAs(service, tenant, agent, 'alice', 'Tell me about the colour teal');
    expect(own.content).toContain('My favourite colour is teal.');
    // …Bob's, in a session of his own, is not.
    const other = await chatAs(service, tenant, agent, 'bob', 'Tell me about the colour teal');
    expect(other.content).not.toContain('favourite colour');
    // Nor is an unnamed end user's: a turn without user_id sees the shared items only.
    const unnamed = await chatAs(service, tenant, agent, undefined, 'Tell me about the colour teal');
    expect(unnamed.content).not.toContain('favourite colour');

    const search = async (userId: string | undefined) =>
      (await service.memory.searchMemory({ agentId: agent.id, query: 'favourite colour teal', topK: 10, userId }, { principal: tenant.principal })).results.map(
        (result) => result.item!.content,
      );
    expect(await search('bob')).not.toContain('My favourite colour is teal.');
    expect(await search('alice')).toContain('My favourite colour is teal.');
    // An operator's search (no user_id) sees every item.
    expect(await search(undefined)).toContain('My favourite colour is teal.');
  });

  test('shared items reach every end user; list filters by end user', async ({ service }) => {
    const tenant = newTenant();
    const agent = await service.createAgent(tenant, { configJson: JSON.stringify({ memory_extraction: false }) });
    const add = (content: string, userId?: string) => service.memory.addMemory({ agentId: agent.id, memoryType: 'semantic', content, userId }, { principal: tenant.principal });
    const shared = await add('Opening hours are nine to five on weekdays.');
    const alices = await add('Alice pays with the card ending 4242.', 'alice');
    expect(shared.item!.userId).toBeUndefined();
    expect(alices.item!.userId).toBe('alice');

    const bob = await chatAs(service, tenant, agent, 'bob', 'What are the opening hours and the card ending?');
    expect(bob.content).toContain('Opening hours are nine to five');
    expect(bob.content).not.toContain('4242');
    expect(await contentsFor(service, tenant, agent.id, 'alice')).toEqual(['Alice pays with the card ending 4242.']);
    expect(await contentsFor(service, tenant, agent.id, 'bob')).toEqual([]);
    expect(await contentsFor(service, tenant, agent.id, undefined)).toHaveLength(2);
  });

  test("a session is one end user's conversation: another user_id is refused, an absent one is the session's", async ({ service }) => {
    const tenant = newTenant();
    const agent = await service.createAgent(tenant, { configJson: JSON.stringify({ memory_extraction: false }) });
    await service.memory.addMemory({ agentId: agent.id, memoryType: 'semantic', content: 'Alice lives on Rua Augusta.', userId: 'alice' }, { principal: tenant.principal });
    const first = await chatAs(service, tenant, agent, 'alice', 'Hello');
    await expectInvalid(chatAs(service, tenant, agent, 'bob', 'Where does Alice live?', first.sessionId), 'user_id');
    const next = await chatAs(service, tenant, agent, undefined, 'Where does Alice live?', first.sessionId);
    expect(next.content).toContain('Rua Augusta');
    const { items } = await service.chat.listSessions({ agentId: agent.id, page: { page: 1, perPage: 10 } }, { principal: tenant.principal });
    expect(items.map((session) => session.userId)).toEqual(['alice']);
  });

  test('user_id is checked: blank, too long or with control characters is 422', async ({ service }) => {
    const tenant = newTenant();
    const agent = await service.createAgent(tenant);
    for (const userId of [' ', 'x'.repeat(129), 'a\nb']) {
      await expectInvalid(chatAs(service, tenant, agent, userId, 'Hello'), 'user_id');
      await expectInvalid(service.memory.addMemory({ agentId: agent.id, memoryType: 'semantic', content: 'x', userId }, { principal: tenant.principal }), 'user_id');
    }
  });

  test("bulk delete by end user removes that user's items from search at once, and only theirs", async ({ service }) => {
    const tenant = newTenant();
    const agent = await service.createAgent(tenant, { configJson: JSON.stringify({ memory_extraction: false }) });
    const add = (content: string, userId?: string) => service.memory.addMemory({ agentId: agent.id, memoryType: 'semantic', content, userId }, { principal: tenant.principal });
    const doomed = await add('Alice collects blue porcelain.', 'alice');
    await add('Alice keeps a porcelain teapot.', 'alice');
    await add('Bob collects porcelain cups.', 'bob');
    await add('Porcelain is fired at high temperature.');

    const { deleted } = await service.memory.deleteMemoryItems({ agentId: agent.id, userId: 'alice' }, { principal: tenant.principal });
    expect(deleted).toBe(2);
    const { results } = await service.memory.searchMemory({ agentId: agent.id, query: 'porcelain', topK: 10 }, { principal: tenant.principal });
    expect(results.map((result) => result.item!.content).sort()).toEqual(['Bob collects porcelain cups.', 'Porcelain is fired at high temperature.']);
    const { entries } = await service.memory.getMemoryHistory({ memoryId: doomed.item!.id }, { principal: tenant.principal });
    expect(entries.map((entry) => [entry.event, entry.source])).toEqual([
      ['ADD', 'api'],
      ['DELETE', 'api'],
    ]);

    // Without user_id: every item of the agent (of the type, when given).
    expect((await service.memory.deleteMemoryItems({ agentId: agent.id, memoryType: 'episodic' }, { principal: tenant.principal })).deleted).toBe(0);
    expect((await service.memory.deleteMemoryItems({ agentId: agent.id }, { principal: tenant.principal })).deleted).toBe(2);
    await expectInvalid(service.memory.deleteMemoryItems({ agentId: agent.id, memoryType: 'procedural' }, { principal: tenant.principal }), 'memory_type');
    await expectError(service.memory.deleteMemoryItems({ agentId: agent.id }, { principal: newTenant().principal }), 'not_found');
  });
});

describe('history and editing', () => {
  test('PATCH re-embeds new content and records each change; history outlives the item', async ({ service }) => {
    const tenant = newTenant();
    const agent = await service.createAgent(tenant, { configJson: JSON.stringify({ memory_extraction: false }) });
    const { item } = await service.memory.addMemory({ agentId: agent.id, memoryType: 'semantic', content: 'The customer prefers phone calls.' }, { principal: tenant.principal });
    const id = item!.id;

    const { item: changed } = await service.memory.updateMemory({ memoryId: id, content: 'The customer prefers carrier pigeons.' }, { principal: tenant.principal });
    expect(changed!.content).toBe('The customer prefers carrier pigeons.');
    expect(changed!.updatedAt).toBeInstanceOf(Date);
    const { results } = await service.memory.searchMemory({ agentId: agent.id, query: 'pigeons', topK: 1 }, { principal: tenant.principal });
    expect(results[0]!.item!.id).toBe(id);

    const { item: tagged } = await service.memory.updateMemory({ memoryId: id, metadataJson: JSON.stringify({ channel: 'post' }) }, { principal: tenant.principal });
    expect(JSON.parse(tagged!.metadataJson)).toEqual({ channel: 'post' });
    expect(tagged!.content).toBe('The customer prefers carrier pigeons.');

    await service.memory.deleteMemory({ memoryId: id }, { principal: tenant.principal });
    const { entries } = await service.memory.getMemoryHistory({ memoryId: id }, { principal: tenant.principal });
    expect(entries.map(({ event, oldContent, newContent, source }) => ({ event, oldContent, newContent, source }))).toEqual([
      { event: 'ADD', oldContent: undefined, newContent: 'The customer prefers phone calls.', source: 'api' },
      { event: 'UPDATE', oldContent: 'The customer prefers phone calls.', newContent: 'The customer prefers carrier pigeons.', source: 'api' },
      { event: 'UPDATE', oldContent: 'The customer prefers carrier pigeons.', newContent: 'The customer prefers carrier pigeons.', source: 'api' },
      { event: 'DELETE', oldContent: 'The customer prefers carrier pigeons.', newContent: undefined, source: 'api' },
    ]);
    await expectError(service.memory.updateMemory({ memoryId: id, content: 'again' }, { principal: tenant.principal }), 'not_found');
    // Another tenant learns nothing of it.
    await expectError(service.memory.getMemoryHistory({ memoryId: id }, { principal: newTenant().principal }), 'not_found');
  });

  test("concurrent PATCHes each record the content they replaced: the history is one chain", async ({ service }) => {
    const tenant = newTenant();
    const agent = await service.createAgent(tenant, { configJson: JSON.stringify({ memory_extraction: false }) });
    const { item } = await service.memory.addMemory({ agentId: agent.id, memoryType: 'semantic', content: 'version 0' }, { principal: tenant.principal });
    await Promise.all(
      Array.from({ length: 6 }, (_unused, index) => service.memory.updateMemory({ memoryId: item!.id, content: `version ${index + 1}` }, { principal: tenant.principal })),
    );
    const { entries } = await service.memory.getMemoryHistory({ memoryId: item!.id }, { principal: tenant.principal });
    expect(entries).toHaveLength(7);
    entries.slice(1).forEach((entry, index) => expect(entry.oldContent).toBe(entries[index]!.newContent));
  });

  test('PATCH with nothing to change, or bad content, is 422', async ({ service }) => {
    const tenant = newTenant();
    const agent = await service.createAgent(tenant);
    const { item } = await service.memory.addMemory({ agentId: agent.id, memoryType: 'semantic', content: 'x' }, { principal: tenant.principal });
    await expectInvalid(service.memory.updateMemory({ memoryId: item!.id }, { principal: tenant.principal }), 'content');
    await expectInvalid(service.memory.updateMemory({ memoryId: item!.id, content: '  ' }, { principal: tenant.principal }), 'content');
    // Emptied content is refused as blank, even beside a valid metadata change, which then is not made either.
    await expectInvalid(service.memory.updateMemory({ memoryId: item!.id, content: '' }, { principal: tenant.principal }), 'content');
    await expectInvalid(service.memory.updateMemory({ memoryId: item!.id, content: '', metadataJson: '{"channel":"post"}' }, { principal: tenant.principal }), 'content');
    const { items } = await service.memory.listMemory({ agentId: agent.id, page: undefined }, { principal: tenant.principal });
    expect(items.map((kept) => [kept.content, kept.metadataJson])).toEqual([['x', '{}']]);
    await expectInvalid(service.memory.updateMemory({ memoryId: item!.id, metadataJson: '[1]' }, { principal: tenant.principal }), 'metadata');
  });

  test("a document's chunks are recorded as the document's, added and deleted", async ({ service }) => {
    const tenant = newTenant();
    const agent = await service.createAgent(tenant);
    const { document } = await service.documents.addTextDocument({ agentId: agent.id, content: 'Returns are accepted within thirty days.' }, { principal: tenant.principal });
    const { items } = await service.memory.listMemory({ agentId: agent.id, page: { page: 1, perPage: 10 } }, { principal: tenant.principal });
    await service.documents.deleteDocument({ documentId: document!.id }, { principal: tenant.principal });
    const { entries } = await service.memory.getMemoryHistory({ memoryId: items[0]!.id }, { principal: tenant.principal });
    expect(entries.map((entry) => [entry.event, entry.source])).toEqual([
      ['ADD', 'document'],
      ['DELETE', 'document'],
    ]);
  });
});

describe('consolidation', () => {
  test("the explicit call consolidates a short conversation, newest messages included, into the session's end user's memory", async ({ service }) => {
    const tenant = newTenant();
    const agent = await service.createAgent(tenant, { configJson: JSON.stringify({ memory_extraction: false }) });
    const turn = await chatAs(service, tenant, agent, 'carol', 'Hello there');
    await chatAs(service, tenant, agent, undefined, 'How are you?', turn.sessionId);

    const kept = await service.memory.consolidateMemory({ agentId: agent.id, keepMessages: 2 }, { principal: tenant.principal });
    expect(kept).toEqual({ itemsIn: 2, itemsOut: 1 });
    const rest = await service.memory.consolidateMemory({ agentId: agent.id }, { principal: tenant.principal });
    expect(rest).toEqual({ itemsIn: 2, itemsOut: 1 });
    expect((await service.memory.consolidateMemory({ agentId: agent.id }, { principal: tenant.principal })).itemsIn).toBe(0);

    const { items } = await service.memory.listMemory({ agentId: agent.id, userId: 'carol', page: { page: 1, perPage: 10 } }, { principal: tenant.principal });
    expect(items).toHaveLength(2);
    const { entries } = await service.memory.getMemoryHistory({ memoryId: items[0]!.id }, { principal: tenant.principal });
    expect(entries.map(({ event, source, sessionId }) => ({ event, source, sessionId }))).toEqual([{ event: 'ADD', source: 'consolidation', sessionId: turn.sessionId }]);
    await expectInvalid(service.memory.consolidateMemory({ agentId: agent.id, keepMessages: -1 }, { principal: tenant.principal }), 'keep_messages');
  });
});
