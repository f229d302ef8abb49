/**
 * The VectorSource contract: what a vector index rebuilds and reconciles itself from. Run against
 * the real one, vectorSource over PostgreSQL written through MemoryRepository as the memory service
 * writes it, and against FakeDatabase, the stand-in every VectorStore test opens its stores on.
 * The change feed is left out: only the real source has one (replicas.test.ts holds it).
 */
import { createTestDatabase } from '@agent-platform/kit/testing';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { MemoryType } from '../../src/agents/agents.entity.js';
import { AgentsRepository } from '../../src/agents/agents.repository.js';
import { openDatabase } from '../../src/database.js';
import type { ChangeSource } from '../../src/memory/memory-items.js';
import { MemoryRepository } from '../../src/memory/memory.repository.js';
import { vectorSource } from '../../src/memory/vector-source.js';
import type { VectorRecord, VectorSource } from '../../src/vectors/vector-store.js';
import { AGENTS_DATABASE, logger } from '../support/harness.js';
import { FakeDatabase, mix, newOwner, record, userRecord } from './vector-fixtures.js';

const DIMENSIONS = 8;
const MODEL = 'contract-model';
const CHANGE: ChangeSource = { source: 'api', sessionId: null };

interface SourceUnderTest {
  source: VectorSource;
  /** Stores new items, as adding a memory does. */
  add(records: readonly VectorRecord[]): Promise<void>;
  /** Gives a stored item a new vector in place, as updating a memory's content does. */
  reembed(record: VectorRecord): Promise<void>;
  remove(records: readonly VectorRecord[]): Promise<void>;
  close(): Promise<void>;
}

const adapters: { name: string; open: () => Promise<SourceUnderTest> }[] = [
  {
    name: 'vectorSource over PostgreSQL',
    open: async () => {
      const database = await createTestDatabase(AGENTS_DATABASE);
      const orm = await openDatabase(database.url, logger);
      const agents = new Set<string>();
      const inTransaction = (work: (memory: MemoryRepository) => Promise<unknown>): Promise<void> =>
        orm.em.fork().transactional(async (em) => void (await work(new MemoryRepository(em))));
      return {
        source: vectorSource(orm.em, MODEL),
        add: (records) =>
          orm.em.fork().transactional(async (em) => {
            const repository = new AgentsRepository(em);
            for (const { tenantId, agentId } of records.filter((each) => !agents.has(each.agentId))) {
              agents.add(agentId);
              repository.insert({ id: agentId, tenantId, name: 'Contract', type: 'assistant', description: null, memoryTypes: ['semantic', 'episodic'], config: {}, tools: [], createdAt: new Date() });
            }
            await em.flush();
            const items = records.map(({ vector, memoryType, ...owned }) => ({
              ...owned,
              documentId: null,
              memoryType: memoryType as MemoryType,
              content: `item ${owned.id}`,
              metadata: {},
              embedding: vector,
              embeddingModel: MODEL,
              createdAt: new Date(),
            }));
            await new MemoryRepository(em).insert(items, CHANGE);
          }),
        reembed: (record) => inTransaction((memory) => memory.update(record.tenantId, record.id, { embedding: record.vector }, CHANGE, new Date())),
        remove: (records) =>
          inTransaction(async (memory) => {
            for (const each of records) await memory.deleteItem(each.tenantId, each.id, CHANGE, new Date());
          }),
        close: async () => {
          await orm.close();
          await database.drop();
        },
      };
    },
  },
  {
    name: 'FakeDatabase',
    open: () => {
      const database = new FakeDatabase({ tracksChanges: true });
      return Promise.resolve({
        source: database,
        add: (records) => Promise.resolve(database.put(...records)),
        reembed: (record) => Promise.resolve(database.put(record)),
        remove: (records) => Promise.resolve(database.remove(...records.map((each) => each.id))),
        close: () => Promise.resolve(),
      });
    },
  },
];

/** A moment after every write made so far: the clock has left their millisecond. */
async function nextMoment(): Promise<Date> {
  const last = Date.now();
  await vi.waitFor(() => expect(Date.now()).toBeGreaterThan(last), { interval: 1 });
  return new Date();
}

const byId = (records: readonly VectorRecord[]) => [...records].sort((a, b) => a.id.localeCompare(b.id));

describe.each(adapters)('VectorSource contract: $name', (adapter) => {
  let subject: SourceUnderTest;
  beforeAll(async () => {
    subject = await adapter.open();
  });
  afterAll(() => subject.close());

  it('lists the id of every item stored, and of none removed', async () => {
    const [alice, bob] = [newOwner(), newOwner()];
    const kept = [record(alice, mix(DIMENSIONS, [0])), userRecord(alice, 'end-user', mix(DIMENSIONS, [1])), record(bob, mix(DIMENSIONS, [2]), 'episodic')];
    const removed = record(alice, mix(DIMENSIONS, [3]));
    await subject.add([...kept, removed]);
    await subject.remove([removed]);
    const ids = await subject.source.ids();
    expect(ids).toEqual(expect.arrayContaining(kept.map((each) => each.id)));
    expect(ids).not.toContain(removed.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('reads records back as stored: owner, memory type, end user and vector', async () => {
    const owner = newOwner();
    const stored = [record(owner, mix(DIMENSIONS, [0, 1], [0.25, -2])), userRecord(owner, 'end-user', mix(DIMENSIONS, [4]), 'episodic')];
    await subject.add(stored);
    expect(byId(await subject.source.records(stored.map((each) => each.id)))).toEqual(byId(stored));
  });

  it('reads each id it holds once, and leaves out ids it never held or no longer holds', async () => {
    const owner = newOwner();
    const [held, removed] = [record(owner, mix(DIMENSIONS, [0])), record(owner, mix(DIMENSIONS, [1]))];
    await subject.add([held, removed]);
    await subject.remove([removed]);
    const unknown = record(owner, mix(DIMENSIONS, [2]));
    expect(await subject.source.records([held.id, unknown.id, removed.id, held.id])).toEqual([held]);
    expect(await subject.source.records([])).toEqual([]);
  });

  it('reads a re-embedded item with its new vector, listed once', async () => {
    const owner = newOwner();
    const item = record(owner, mix(DIMENSIONS, [0]));
    await subject.add([item]);
    const reembedded = { ...item, vector: mix(DIMENSIONS, [5]) };
    await subject.reembed(reembedded);
    expect(await subject.source.records([item.id])).toEqual([reembedded]);
    expect((await subject.source.ids()).filter((id) => id === item.id)).toEqual([item.id]);
  });

  it('tells which items were re-embedded since a moment: not those untouched since, added since or removed', async () => {
    const owner = newOwner();
    const [reembedded, untouched, gone] = [record(owner, mix(DIMENSIONS, [0])), record(owner, mix(DIMENSIONS, [1])), record(owner, mix(DIMENSIONS, [2]))];
    await subject.add([reembedded, untouched, gone]);
    const since = await nextMoment();
    await subject.reembed({ ...reembedded, vector: mix(DIMENSIONS, [6]) });
    await subject.reembed({ ...gone, vector: mix(DIMENSIONS, [6]) });
    await subject.remove([gone]);
    const added = record(owner, mix(DIMENSIONS, [3]));
    await subject.add([added]);
    const ours = new Set([reembedded.id, untouched.id, gone.id, added.id]);
    expect((await subject.source.changedSince!(since)).filter((id) => ours.has(id))).toEqual([reembedded.id]);
  });
});
