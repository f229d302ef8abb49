/**
 * What only the embedded store does: its files (saved, reloaded, damaged, stale, of another
 * model) and its HNSW graph's recall against exact search.
 */
import { access, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { EmbeddedVectorStore, type EmbeddedVectorStoreOptions } from '../../src/vectors/embedded-vector-store.js';
import { agentDirectory, GRAPH_FILE, GRAPH_META_FILE, ROWS_FILE } from '../../src/vectors/index-directory.js';
import { type VectorRecord } from '../../src/vectors/vector-store.js';
import {
  bruteForce,
  FakeDatabase,
  mix,
  newOwner,
  type Owner,
  randomUnit,
  record,
  recordingLogger,
  seededRandom,
  temporaryDirectory,
} from './vector-fixtures.js';

const DIMENSIONS = 8;
const MODEL = 'test-model';
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function directory(): Promise<string> {
  const made = await temporaryDirectory();
  cleanups.push(made.remove);
  return made.path;
}

async function openStore(path: string | undefined, database: FakeDatabase, options: Partial<EmbeddedVectorStoreOptions> = {}) {
  const { logger, infos, warnings } = recordingLogger();
  const store = new EmbeddedVectorStore({ directory: path, dimensions: DIMENSIONS, model: MODEL, logger, ...options });
  await store.open(database);
  cleanups.push(() => store.close());
  return { store, infos, warnings };
}

/** Writes records to the database and the index, as the memory service does. */
async function write(store: EmbeddedVectorStore, database: FakeDatabase, records: VectorRecord[]): Promise<void> {
  database.put(...records);
  await store.upsert(records);
}

async function nearest(store: EmbeddedVectorStore, owner: Owner, vector: Float32Array, limit = 10): Promise<string[]> {
  return (await store.search({ ...owner, vector, limit })).map((hit) => hit.id);
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

/** Two agents' worth of records, and the directory they were saved to by a closed store. */
async function savedIndex(tracksChanges = false) {
  const path = await directory();
  const database = new FakeDatabase({ tracksChanges });
  const { store } = await openStore(path, database);
  const [alice, bob] = [newOwner(), newOwner()];
  const records = [record(alice, mix(DIMENSIONS, [0])), record(alice, mix(DIMENSIONS, [1])), record(bob, mix(DIMENSIONS, [0]))];
  await write(store, database, records);
  await store.close();
  database.fetched = 0;
  return { path, database, alice, bob, records, rowsOf: (owner: Owner) => join(agentDirectory(path, owner.tenantId, owner.agentId), ROWS_FILE) };
}

describe('EmbeddedVectorStore files', () => {
  it('keeps its vectors across close and open without asking the database again', async () => {
    const { path, database, alice, bob, records, rowsOf } = await savedIndex();
    expect(await exists(rowsOf(alice))).toBe(true);
    const { store, warnings } = await openStore(path, database);
    expect(await nearest(store, alice, mix(DIMENSIONS, [0]))).toEqual([records[0]!.id, records[1]!.id]);
    expect(await nearest(store, bob, mix(DIMENSIONS, [0]))).toEqual([records[2]!.id]);
    expect(database.fetched).toBe(0);
    expect(warnings).toEqual([]);
  });

  it('saves after enough writes, before any close', async () => {
    const path = await directory();
    const database = new FakeDatabase();
    const { store } = await openStore(path, database, { saveAfterChanges: 3 });
    const owner = newOwner();
    await write(store, database, [record(owner, mix(DIMENSIONS, [0])), record(owner, mix(DIMENSIONS, [1])), record(owner, mix(DIMENSIONS, [2]))]);
    const rows = join(agentDirectory(path, owner.tenantId, owner.agentId), ROWS_FILE);
    await vi.waitFor(async () => expect(await exists(rows)).toBe(true));
    // A second process reading the directory now (as after a crash) finds all three.
    const { store: reader } = await openStore(path, database);
    expect(await nearest(reader, owner, mix(DIMENSIONS, [0]))).toHaveLength(3);
    expect(database.fetched).toBe(0);
  });

  it('rebuilds from the database when the files are gone, with one warning', async () => {
    const { path, database, alice, records } = await savedIndex();
    await rm(path, { recursive: true });
    const { store, warnings } = await openStore(path, database);
    expect(await nearest(store, alice, mix(DIMENSIONS, [1]))).toEqual([records[1]!.id, records[0]!.id]);
    expect(database.fetched).toBe(3);
    expect(warnings).toHaveLength(1);
  });

  it.each([
    ['garbage', (file: string) => writeFile(file, Buffer.from('garbage garbage garbage, not vectors at all'))],
    ['truncated', async (file: string) => truncate(file, Math.floor((await readFile(file)).length / 2))],
    ['one flipped byte', async (file: string) => {
      const bytes = await readFile(file);
      bytes[bytes.length - 9] = (bytes[bytes.length - 9] ?? 0) ^ 0xff;
      await writeFile(file, bytes);
    }],
  ])('rebuilds an agent whose rows file is %s, with one warning', async (_, damage) => {
    const { path, database, alice, bob, records, rowsOf } = await savedIndex();
    await damage(rowsOf(alice));
    const { store, warnings } = await openStore(path, database);
    expect(await nearest(store, alice, mix(DIMENSIONS, [1]))).toEqual([records[1]!.id, records[0]!.id]);
    expect(await nearest(store, bob, mix(DIMENSIONS, [0]))).toEqual([records[2]!.id]);
    expect(database.fetched).toBe(2);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('1 unusable');
  });

  it.each([
    { model: 'another-model', dimensions: DIMENSIONS },
    { model: MODEL, dimensions: DIMENSIONS * 2 },
  ])('rebuilds files written for $model in $dimensions dimensions', async ({ model, dimensions }) => {
    const path = await directory();
    const owner = newOwner();
    const old = new EmbeddedVectorStore({ directory: path, dimensions, model });
    await old.open(new FakeDatabase());
    await old.upsert([record(owner, mix(dimensions, [0]))]);
    await old.close();
    const database = new FakeDatabase();
    const current = record(owner, mix(DIMENSIONS, [3]));
    database.put(current);
    const { store, warnings } = await openStore(path, database);
    expect(await nearest(store, owner, mix(DIMENSIONS, [0]))).toEqual([current.id]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(dimensions === DIMENSIONS ? 'another-model' : `${DIMENSIONS * 2} dimensions`);
  });

  it('reconciles stale files: drops what the database lost, fetches what it gained', async () => {
    const { path, database, alice, records } = await savedIndex();
    const gained = record(alice, mix(DIMENSIONS, [0, 2]));
    const newcomer = newOwner();
    const newcomerRecord = record(newcomer, mix(DIMENSIONS, [4]));
    database.remove(records[0]!.id);
    database.put(gained, newcomerRecord);
    const { store, warnings } = await openStore(path, database);
    expect(await nearest(store, alice, mix(DIMENSIONS, [0]))).toEqual([gained.id, records[1]!.id]);
    expect(await nearest(store, newcomer, mix(DIMENSIONS, [4]))).toEqual([newcomerRecord.id]);
    expect(warnings).toEqual([]);
  });

  it('fetches again the vectors re-embedded while it was down, when the source can tell', async () => {
    const { path, database, alice, records } = await savedIndex(true);
    database.put({ ...records[0]!, vector: mix(DIMENSIONS, [5]) });
    const { store } = await openStore(path, database);
    const hits = await store.search({ ...alice, vector: mix(DIMENSIONS, [5]), limit: 1 });
    expect(hits).toEqual([{ id: records[0]!.id, score: expect.closeTo(1, 4) }]);
  });

  it('removes an agent’s files with the agent', async () => {
    const { path, database, alice, bob, rowsOf } = await savedIndex();
    const { store } = await openStore(path, database);
    await store.deleteAgent(alice.tenantId, alice.agentId);
    await store.close();
    expect(await exists(agentDirectory(path, alice.tenantId, alice.agentId))).toBe(false);
    expect(await exists(rowsOf(bob))).toBe(true);
  });
});

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

  it('finds ≥ 98% of the exact top 10 among 5,000 random 384-dimension vectors, filtered or not', async () => {
    const dimensions = 384;
    const database = new FakeDatabase();
    const owner = newOwner();
    const random = seededRandom(2024);
    const records = Array.from({ length: 5_000 }, (_, index) => record(owner, randomUnit(random, dimensions), index % 3 === 0 ? 'episodic' : 'semantic'));
    database.put(...records);
    const store = new EmbeddedVectorStore({ directory: undefined, dimensions, model: MODEL, exactSearchMaxVectors: 1_000 });
    cleanups.push(() => store.close());
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
});
