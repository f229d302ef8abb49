import { newId } from '@agent-platform/kit';
import { describe, expect } from 'vitest';
import { openDatabase } from '../src/database.js';
import type { NewMemoryItem } from '../src/memory/memory-items.js';
import { MemoryRepository } from '../src/memory/memory.repository.js';
import { vectorSource } from '../src/memory/vector-source.js';
import { HashingEmbedder } from '../src/models/hashing-embedder.js';
import { EmbeddedVectorStore } from '../src/vectors/embedded-vector-store.js';
import { FollowingVectorStore } from '../src/vectors/following-vector-store.js';
import { ThreadedVectorStore } from '../src/vectors/threaded-vector-store.js';
import { databaseTest, logger, newTenant, startAgentMemory, type AgentMemoryHarness } from './support/harness.js';

// Two replicas of agent-memory on one database, each with its own embedded index (decisions §18.6).
// Their indexes are inspected directly: search's full-text half would find many items without them.
const embedder = new HashingEmbedder();
const indexes = { writer: followingIndex(), reader: followingIndex() };

function followingIndex(inner = new EmbeddedVectorStore({ directory: undefined, dimensions: embedder.dimensions, model: embedder.model })): FollowingVectorStore {
  return new FollowingVectorStore(inner, { logger });
}

const test = databaseTest.extend('replicas', { scope: 'file' }, async ({ database }, { onCleanup }) => {
  const writer = await startAgentMemory(database, { embedder, vectors: indexes.writer });
  const reader = await startAgentMemory(database, { embedder, vectors: indexes.reader });
  onCleanup(() => Promise.all([writer.stop(), reader.stop()]).then(() => undefined));
  return { writer, reader };
});

async function vectorOf(text: string): Promise<Float32Array> {
  const [vector] = await embedder.embed([text]);
  return vector!;
}

/** What the index finds for `text` among the agent's items: ids, best first, with their cosine. */
async function found(index: FollowingVectorStore, tenantId: string, agentId: string, text: string): Promise<{ id: string; score: number }[]> {
  return index.search({ tenantId, agentId, vector: await vectorOf(text), limit: 50 });
}

async function newAgent(service: AgentMemoryHarness) {
  const tenant = newTenant();
  const agent = await service.createAgent(tenant);
  return { tenant, agent, call: { principal: tenant.principal } };
}

describe('replicas that each hold an embedded index', () => {
  test('an item added through one is in the very next search of the other', async ({ replicas }) => {
    const { tenant, agent, call } = await newAgent(replicas.writer);
    // The reader has looked at the agent before the write: its position is not the one it opened at.
    expect(await found(indexes.reader, tenant.tenantId, agent.id, 'anything')).toEqual([]);
    for (let round = 0; round < 5; round += 1) {
      const content = `fact number ${round} about the harbour`;
      const { item } = await replicas.writer.memory.addMemory({ agentId: agent.id, memoryType: 'semantic', content }, call);
      const hits = await found(indexes.reader, tenant.tenantId, agent.id, content);
      expect(hits[0]).toEqual({ id: item!.id, score: expect.closeTo(1, 5) as number });
      expect(hits).toHaveLength(round + 1);
    }
  });

  test('a changed item is found by its new words, a deleted one is not found at all', async ({ replicas }) => {
    const { tenant, agent, call } = await newAgent(replicas.writer);
    const { item: moved } = await replicas.writer.memory.addMemory({ agentId: agent.id, memoryType: 'semantic', content: 'Lives in Lisbon' }, call);
    const { item: dropped } = await replicas.writer.memory.addMemory({ agentId: agent.id, memoryType: 'semantic', content: 'Owns a red bicycle' }, call);
    expect((await found(indexes.reader, tenant.tenantId, agent.id, 'Lives in Lisbon'))[0]?.id).toBe(moved!.id);

    await replicas.writer.memory.updateMemory({ memoryId: moved!.id, content: 'Moved to Porto in May' }, call);
    await replicas.writer.memory.deleteMemory({ memoryId: dropped!.id }, call);
    const hits = await found(indexes.reader, tenant.tenantId, agent.id, 'Moved to Porto in May');
    expect(hits).toEqual([{ id: moved!.id, score: expect.closeTo(1, 5) as number }]);

    await replicas.writer.memory.deleteMemoryItems({ agentId: agent.id }, call);
    expect(await found(indexes.reader, tenant.tenantId, agent.id, 'Moved to Porto in May')).toEqual([]);
  });

  test('a search waits for a look at the database begun after it arrived, not one begun before a write it follows', async ({ replicas, database }) => {
    const { tenant, agent, call } = await newAgent(replicas.writer);
    const orm = await openDatabase(database.url, logger);
    const source = vectorSource(orm.em, embedder.model);
    const feed = source.feed!;
    // The first look reads the database at once and answers only when released: a write lands in between.
    let release = (): void => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    let looks = 0;
    const slow = followingIndex();
    await slow.open({
      ...source,
      feed: {
        position: () => feed.position(),
        gone: (agents) => feed.gone(agents),
        changes: async (...args) => {
          looks += 1;
          const changes = await feed.changes(...args);
          if (looks === 1) await released;
          return changes;
        },
      },
    });
    try {
      const before = found(slow, tenant.tenantId, agent.id, 'Parcel left at the quay');
      await expect.poll(() => looks).toBe(1);
      const { item } = await replicas.writer.memory.addMemory({ agentId: agent.id, memoryType: 'episodic', content: 'Parcel left at the quay' }, call);
      const after = found(slow, tenant.tenantId, agent.id, 'Parcel left at the quay');
      release();
      expect(await before).toEqual([]);
      expect((await after)[0]?.id).toBe(item!.id);
      expect(looks).toBe(2);
    } finally {
      await slow.close();
      await orm.close();
    }
  });

  test('writes that commit out of the order they were written in all reach the index', async ({ replicas, database }) => {
    const { tenant, agent } = await newAgent(replicas.writer);
    const orm = await openDatabase(database.url, logger);
    const item = async (content: string): Promise<NewMemoryItem> => ({
      id: newId('memoryItem'),
      tenantId: tenant.tenantId,
      agentId: agent.id,
      documentId: null,
      userId: null,
      memoryType: 'semantic',
      content,
      metadata: {},
      embedding: await vectorOf(content),
      embeddingModel: embedder.model,
      createdAt: new Date(),
    });
    const [early, late] = [await item('written first, committed last'), await item('written last, committed first')];
    let commit = (): void => undefined;
    const committing = new Promise<void>((resolve) => (commit = resolve));
    let written = (): void => undefined;
    const isWritten = new Promise<void>((resolve) => (written = resolve));
    try {
      // The held transaction's history entry takes the lower seq, then commits after the other one.
      const held = orm.em.fork().transactional(async (tx) => {
        await new MemoryRepository(tx).insert([early], { source: 'api', sessionId: null });
        written();
        await committing;
      });
      await isWritten;
      await orm.em.fork().transactional((tx) => new MemoryRepository(tx).insert([late], { source: 'api', sessionId: null }));
      expect((await found(indexes.reader, tenant.tenantId, agent.id, late.content)).map((hit) => hit.id)).toEqual([late.id]);
      commit();
      await held;
      expect((await found(indexes.reader, tenant.tenantId, agent.id, early.content))[0]?.id).toBe(early.id);
    } finally {
      commit();
      await orm.close();
    }
  });

  test('an agent deleted through one has its vectors dropped from the other at its next sweep', async ({ replicas, database }) => {
    const { tenant, agent, call } = await newAgent(replicas.writer);
    await replicas.writer.memory.addMemory({ agentId: agent.id, memoryType: 'semantic', content: 'Collects old maps' }, call);
    const { agent: kept, call: keptCall } = await newAgent(replicas.writer);
    await replicas.writer.memory.addMemory({ agentId: kept.id, memoryType: 'semantic', content: 'Keeps bees' }, keptCall);
    const orm = await openDatabase(database.url, logger);
    const inner = new EmbeddedVectorStore({ directory: undefined, dimensions: embedder.dimensions, model: embedder.model });
    const follower = followingIndex(inner);
    // Opened after the writes: it holds both agents without ever searching them.
    await follower.open(vectorSource(orm.em, embedder.model));
    try {
      const held = () => inner.heldAgents().map((ref) => ref.agentId);
      expect(held()).toEqual(expect.arrayContaining([agent.id, kept.id]));
      expect(await follower.sweep()).toBe(0);

      await replicas.writer.agents.deleteAgent({ agentId: agent.id }, call);
      expect(held()).toContain(agent.id);
      expect(await follower.sweep()).toBe(1);
      expect(held()).not.toContain(agent.id);
      expect(held()).toContain(kept.id);
      expect(await found(follower, tenant.tenantId, agent.id, 'Collects old maps')).toEqual([]);
    } finally {
      await follower.close();
      await orm.close();
    }
  });

  test('its index on a thread of its own, as agent-memory runs it, sweeps on its own', async ({ replicas, database }) => {
    const { agent, call } = await newAgent(replicas.writer);
    await replicas.writer.memory.addMemory({ agentId: agent.id, memoryType: 'semantic', content: 'Sails on Sundays' }, call);
    const orm = await openDatabase(database.url, logger);
    const inner = new ThreadedVectorStore({ directory: undefined, dimensions: embedder.dimensions, model: embedder.model, logger });
    const follower = new FollowingVectorStore(inner, { logger, sweepIntervalMs: 20 });
    await follower.open(vectorSource(orm.em, embedder.model));
    try {
      const held = async () => (await inner.heldAgents()).map((ref) => ref.agentId);
      expect(await held()).toContain(agent.id);
      await replicas.writer.agents.deleteAgent({ agentId: agent.id }, call);
      await expect.poll(held).not.toContain(agent.id);
    } finally {
      await follower.close();
      await orm.close();
    }
  });

  test('a replica started later reads everything, then follows the rest', async ({ replicas, database }) => {
    const { tenant, agent, call } = await newAgent(replicas.writer);
    await replicas.writer.memory.addMemory({ agentId: agent.id, memoryType: 'semantic', content: 'Prefers trains to planes' }, call);
    const late = followingIndex();
    const third = await startAgentMemory(database, { embedder, vectors: late });
    try {
      expect(await found(late, tenant.tenantId, agent.id, 'Prefers trains to planes')).toHaveLength(1);
      const { item } = await replicas.writer.memory.addMemory({ agentId: agent.id, memoryType: 'semantic', content: 'Allergic to peanuts' }, call);
      expect((await found(late, tenant.tenantId, agent.id, 'Allergic to peanuts'))[0]?.id).toBe(item!.id);
    } finally {
      await third.stop();
    }
  });
});
