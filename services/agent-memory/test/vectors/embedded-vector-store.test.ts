/**
 * What only the embedded store does: its files (saved, reloaded, damaged, stale, of another
 * model, of an earlier version) and its HNSW graph's recall against exact search.
 */
import { access, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
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
  userRecord,
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

/** The ids found for `userId`'s audience, best first. */
async function nearestFor(store: EmbeddedVectorStore, owner: Owner, userId: string | null, vector: Float32Array, limit = 10): Promise<string[]> {
  return (await store.search({ ...owner, vector, limit, audience: { userId } })).map((hit) => hit.id);
}

/** The JSON header of a rows file: after the 8-byte magic and its 4-byte length. */
async function rowsHeader(file: string): Promise<Record<string, unknown>> {
  const bytes = await readFile(file);
  return JSON.parse(bytes.toString('utf8', 12, 12 + bytes.readUInt32LE(8))) as Record<string, unknown>;
}

/**
 * Rewrites the JSON header of a rows file (magic, header length, header, padding to 4 bytes,
 * vectors, CRC-32), as the file of another version would have it.
 */
async function editRowsHeader(file: string, edit: (header: Record<string, unknown>) => Record<string, unknown>): Promise<void> {
  const bytes = await readFile(file);
  const headerLength = bytes.readUInt32LE(8);
  const header = await rowsHeader(file);
  const vectors = bytes.subarray(12 + headerLength + ((4 - ((12 + headerLength) % 4)) % 4), bytes.length - 4);
  const edited = Buffer.from(JSON.stringify(edit(header)), 'utf8');
  const length = Buffer.alloc(4);
  length.writeUInt32LE(edited.length);
  const body = Buffer.concat([bytes.subarray(0, 8), length, edited, Buffer.alloc((4 - ((12 + edited.length) % 4)) % 4), vectors]);
  const checksum = Buffer.alloc(4);
  checksum.writeUInt32LE(crc32(body) >>> 0);
  await writeFile(file, Buffer.concat([body, checksum]));
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

  it("keeps end users' items apart across close and open, without the database", async () => {
    const path = await directory();
    const database = new FakeDatabase();
    const first = await openStore(path, database);
    const owner = newOwner();
    const shared = record(owner, mix(DIMENSIONS, [0, 1], [1, 1]));
    const alices = userRecord(owner, 'alice', mix(DIMENSIONS, [0]));
    const bobs = userRecord(owner, 'bob', mix(DIMENSIONS, [0]), 'episodic');
    await write(first.store, database, [shared, alices, bobs]);
    await first.store.close();
    const rows = await rowsHeader(join(agentDirectory(path, owner.tenantId, owner.agentId), ROWS_FILE));
    expect(new Set(rows.labels as string[])).toEqual(new Set(['semantic', 'semantic\u0000alice', 'episodic\u0000bob']));

    database.fetched = 0;
    const { store, warnings } = await openStore(path, database);
    const query = mix(DIMENSIONS, [0]);
    expect(await nearestFor(store, owner, 'alice', query)).toEqual([alices.id, shared.id]);
    expect(await nearestFor(store, owner, 'bob', query)).toEqual([bobs.id, shared.id]);
    expect(await nearestFor(store, owner, null, query)).toEqual([shared.id]);
    expect(await store.search({ ...owner, vector: query, limit: 10, memoryTypes: ['episodic'], audience: { userId: 'alice' } })).toEqual([]);
    expect(await nearest(store, owner, query)).toHaveLength(3);
    expect(database.fetched).toBe(0);
    expect(warnings).toEqual([]);
  });

  it('loads rows files saved before end users, their items shared with every user', async () => {
    const { path, database, alice, records, rowsOf } = await savedIndex();
    // Those files named the labels `types`, and each was a bare memory type.
    await editRowsHeader(rowsOf(alice), ({ labels, ...rest }) => ({ ...rest, types: labels }));
    expect(await rowsHeader(rowsOf(alice))).toMatchObject({ types: ['semantic', 'semantic'] });
    const { store, warnings } = await openStore(path, database);
    expect(await nearestFor(store, alice, 'anyone', mix(DIMENSIONS, [0]))).toEqual([records[0]!.id, records[1]!.id]);
    expect(await nearestFor(store, alice, null, mix(DIMENSIONS, [1]))).toEqual([records[1]!.id, records[0]!.id]);
    expect(await nearest(store, alice, mix(DIMENSIONS, [0]))).toEqual([records[0]!.id, records[1]!.id]);
    expect(database.fetched).toBe(0);
    expect(warnings).toEqual([]);
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
    cleanups.push(() => store.close());
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
