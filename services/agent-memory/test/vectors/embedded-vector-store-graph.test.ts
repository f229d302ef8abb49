/**
 * The embedded store's HNSW graph: saved and reused, rebuilt when damaged or of another precision,
 * and its recall against exact search. Its rows files: embedded-vector-store-files.test.ts.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EmbeddedVectorStore } from '../../src/vectors/embedded-vector-store.js';
import { agentDirectory, GRAPH_FILE, GRAPH_META_FILE } from '../../src/vectors/index-directory.js';
import { afterThisTest, DIMENSIONS, directory, exists, MODEL, nearest, nearestFor, openStore, write } from './embedded-store-support.js';
import { bruteForce, FakeDatabase, newOwner, randomUnit, record, seededRandom, userRecord } from './vector-fixtures.js';

describe('EmbeddedVectorStore HNSW graph', () => {
  /** An empty directory and database, one agent, and seeded random vectors. */
  async function freshGraphCase(seed: number) {
    return { path: await directory(), database: new FakeDatabase(), owner: newOwner(), random: seededRandom(seed) };
  }

  async function graphIndex(path: string, database: FakeDatabase) {
    const { store, warnings } = await openStore(path, database, { exactSearchMaxVectors: 20 });
    await store.whenIndexed();
    return { store, warnings };
  }

  it('is saved at close, reused at open, and rebuilt when its file is damaged', async () => {
    const { path, database, owner, random } = await freshGraphCase(11);
    const records = Array.from({ length: 200 }, () => record(owner, randomUnit(random, DIMENSIONS)));
    const first = await graphIndex(path, database);
    await write(first.store, database, records);
    await first.store.whenIndexed();
    expect(first.store.describeAgent(owner.tenantId, owner.agentId)).toEqual({ vectors: 200, searchMode: 'hnsw' });
    const query = randomUnit(random, DIMENSIONS);
    // What this very graph answers: a graph read back from its file must answer the same.
    const beforeClose = await nearest(first.store, owner, query, 5);
    await first.store.close();
    const graph = join(agentDirectory(path, owner.tenantId, owner.agentId), GRAPH_FILE);
    expect(await exists(graph)).toBe(true);

    const expected = bruteForce(records, query, 5).map((hit) => hit.id);
    const reused = await graphIndex(path, database);
    expect(reused.warnings).toEqual([]);
    expect(await nearest(reused.store, owner, query, 5)).toEqual(beforeClose);
    await reused.store.close();

    // These bytes make usearch abort the process (std::bad_alloc) if they ever reach Index.load.
    await writeFile(graph, Buffer.from('garbage garbage garbage'));
    const rebuilt = await graphIndex(path, database);
    expect(rebuilt.warnings).toHaveLength(1);
    expect(rebuilt.warnings[0]).toContain(GRAPH_FILE);
    expect(rebuilt.store.describeAgent(owner.tenantId, owner.agentId)?.searchMode).toBe('hnsw');
    // A rebuilt graph is a new approximate index (its levels are drawn at random): it finds the
    // exact neighbours, give or take one at the edge of the top 5.
    const found = await nearest(rebuilt.store, owner, query, 5);
    expect(found[0]).toBe(expected[0]);
    expect(found.filter((id) => expected.includes(id)).length).toBeGreaterThanOrEqual(4);
    expect(database.fetched).toBe(0);
  });

  it('rebuilds a graph saved in another precision (files from before half precision) from the rows', async () => {
    const { path, database, owner, random } = await freshGraphCase(13);
    const first = await graphIndex(path, database);
    await write(first.store, database, Array.from({ length: 100 }, () => record(owner, randomUnit(random, DIMENSIONS))));
    await first.store.whenIndexed();
    await first.store.close();
    const metaPath = join(agentDirectory(path, owner.tenantId, owner.agentId), GRAPH_META_FILE);
    const { quantization, ...older } = JSON.parse(await readFile(metaPath, 'utf8')) as { quantization: string };
    expect(quantization).toBe('f16');
    await writeFile(metaPath, JSON.stringify(older));

    database.fetched = 0;
    const reopened = await graphIndex(path, database);
    expect(reopened.warnings).toHaveLength(1);
    expect(reopened.warnings[0]).toContain('precision');
    expect(reopened.store.describeAgent(owner.tenantId, owner.agentId)).toEqual({ vectors: 100, searchMode: 'hnsw' });
    expect(database.fetched).toBe(0);
  });

  it('saves a graph still being filled at close, and finishes it at the next open without the database', async () => {
    const { path, database, owner, random } = await freshGraphCase(5);
    const dimensions = 128;
    const records = Array.from({ length: 6_000 }, () => record(owner, randomUnit(random, dimensions)));
    const first = await openStore(path, database, { dimensions, exactSearchMaxVectors: 20 });
    await write(first.store, database, records);
    expect(first.store.describeAgent(owner.tenantId, owner.agentId)?.searchMode).toBe('exact');
    await first.store.close();
    const meta = JSON.parse(await readFile(join(agentDirectory(path, owner.tenantId, owner.agentId), GRAPH_META_FILE), 'utf8')) as { keys: number[] };
    expect(meta.keys.length).toBeGreaterThan(0);
    expect(meta.keys.length).toBeLessThan(records.length);

    database.fetched = 0;
    const { store, infos } = await openStore(path, database, { dimensions, exactSearchMaxVectors: 20 });
    await store.whenIndexed();
    expect(store.describeAgent(owner.tenantId, owner.agentId)).toEqual({ vectors: records.length, searchMode: 'hnsw' });
    expect(infos).toContain('vector index: HNSW graph complete');
    for (const item of records.slice(-5)) expect(await nearest(store, owner, item.vector, 1)).toEqual([item.id]);
    expect(database.fetched).toBe(0);
  });

  it("finds an end user's 10 items among 50,000 of other users' through the graph", async () => {
    const database = new FakeDatabase();
    const owner = newOwner();
    const random = seededRandom(31);
    const needles = Array.from({ length: 10 }, (_, index) => userRecord(owner, 'needle', randomUnit(random, DIMENSIONS), index < 3 ? 'episodic' : 'semantic'));
    const shared = Array.from({ length: 5 }, () => record(owner, randomUnit(random, DIMENSIONS)));
    const others = Array.from({ length: 50_000 }, (_, index) => userRecord(owner, `user-${index % 2_500}`, randomUnit(random, DIMENSIONS)));
    for (const item of [...others.slice(0, 25_000), ...needles, ...shared, ...others.slice(25_000)]) database.put(item);
    // Between the 5 shared items and the needle's 15 visible ones: the shared ones alone are
    // gathered and searched exactly, the needle's are dug out of the graph by over-fetching.
    // A sparser graph than the default: building 50,000 vectors is most of this test's time.
    const hnsw = { connectivity: 8, expansionAdd: 32 };
    const store = new EmbeddedVectorStore({ directory: undefined, dimensions: DIMENSIONS, model: MODEL, exactSearchMaxVectors: 12, hnsw });
    afterThisTest(() => store.close());
    await store.open(database);
    await store.whenIndexed();
    expect(store.describeAgent(owner.tenantId, owner.agentId)).toEqual({ vectors: 50_015, searchMode: 'hnsw' });

    const visible = [...needles, ...shared];
    const idsOf = (hits: { id: string }[]): string[] => hits.map((hit) => hit.id);
    for (let round = 0; round < 10; round += 1) {
      const query = randomUnit(random, DIMENSIONS);
      expect(await nearestFor(store, owner, 'needle', query, 15)).toEqual(idsOf(bruteForce(visible, query, 15)));
      expect(await nearestFor(store, owner, 'needle', query, 3)).toEqual(idsOf(bruteForce(visible, query, 3)));
      expect(await nearestFor(store, owner, null, query, 15)).toEqual(idsOf(bruteForce(shared, query, 15)));
      const episodes = await store.search({ ...owner, vector: query, limit: 10, memoryTypes: ['episodic'], audience: { userId: 'needle' } });
      expect(idsOf(episodes)).toEqual(idsOf(bruteForce(needles.slice(0, 3), query, 10)));
      const neighbours = await nearestFor(store, owner, 'user-7', query, 30);
      expect(neighbours).toHaveLength(25);
      expect(neighbours.filter((id) => needles.some((needle) => needle.id === id))).toEqual([]);
    }
  }, 30_000);

  it('finds ≥ 98% of the exact top 10 among 5,000 random 384-dimension vectors, filtered or not', async () => {
    const dimensions = 384;
    const database = new FakeDatabase();
    const owner = newOwner();
    const random = seededRandom(2024);
    const records = Array.from({ length: 5_000 }, (_, index) => record(owner, randomUnit(random, dimensions), index % 3 === 0 ? 'episodic' : 'semantic'));
    database.put(...records);
    const store = new EmbeddedVectorStore({ directory: undefined, dimensions, model: MODEL, exactSearchMaxVectors: 1_000 });
    afterThisTest(() => store.close());
    await store.open(database);
    await store.whenIndexed();
    expect(store.describeAgent(owner.tenantId, owner.agentId)).toEqual({ vectors: 5_000, searchMode: 'hnsw' });

    const episodic = records.filter((candidate) => candidate.memoryType === 'episodic');
    let found = 0;
    let foundFiltered = 0;
    const queries = 100;
    for (let query = 0; query < queries; query += 1) {
      const vector = randomUnit(random, dimensions);
      const exact = new Set(bruteForce(records, vector, 10).map((hit) => hit.id));
      found += (await nearest(store, owner, vector)).filter((id) => exact.has(id)).length;
      const exactFiltered = new Set(bruteForce(episodic, vector, 10).map((hit) => hit.id));
      const filtered = await store.search({ ...owner, vector, limit: 10, memoryTypes: ['episodic'] });
      expect(filtered).toHaveLength(10);
      foundFiltered += filtered.filter((hit) => exactFiltered.has(hit.id)).length;
    }
    expect(found / (queries * 10)).toBeGreaterThanOrEqual(0.98);
    expect(foundFiltered / (queries * 10)).toBeGreaterThanOrEqual(0.98);
  });

  it('answers searches asked together as it answers each alone, across agents, limits and filters', async () => {
    const database = new FakeDatabase();
    const random = seededRandom(77);
    const owners = [newOwner(), newOwner()];
    const records = owners.flatMap((owner) => Array.from({ length: 400 }, (_, index) => record(owner, randomUnit(random, DIMENSIONS), index % 4 === 0 ? 'episodic' : 'semantic')));
    database.put(...records);
    const { store } = await openStore(undefined, database, { exactSearchMaxVectors: 50 });
    await store.whenIndexed();
    for (const owner of owners) expect(store.describeAgent(owner.tenantId, owner.agentId)?.searchMode).toBe('hnsw');

    const asks = Array.from({ length: 24 }, (_, index) => ({
      ...owners[index % 2]!,
      vector: randomUnit(random, DIMENSIONS),
      limit: [3, 10, 10, 25][index % 4]!,
      ...(index % 3 === 0 ? { memoryTypes: ['episodic'] } : {}),
    }));
    const alone = [];
    for (const ask of asks) alone.push(await store.search(ask));
    // Asked in one turn of the event loop: answered as one batch per agent.
    const together = await Promise.all(asks.map((ask) => store.search(ask)));
    expect(together).toEqual(alone);
    expect(together.map((hits) => hits.length)).toEqual(asks.map((ask) => ask.limit));
  });
});
