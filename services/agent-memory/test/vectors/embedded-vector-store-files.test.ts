/**
 * What only the embedded store does with its files: saved, reloaded, damaged, stale, of another
 * model, of an earlier version. Its HNSW graph: embedded-vector-store-graph.test.ts.
 */
import { readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { describe, expect, it, vi } from 'vitest';
import { EmbeddedVectorStore } from '../../src/vectors/embedded-vector-store.js';
import { agentDirectory, ROWS_FILE } from '../../src/vectors/index-directory.js';
import { DIMENSIONS, directory, exists, MODEL, nearest, nearestFor, openStore, write } from './embedded-store-support.js';
import { FakeDatabase, mix, newOwner, type Owner, record, userRecord } from './vector-fixtures.js';

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
