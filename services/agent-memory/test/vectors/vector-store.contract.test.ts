/**
 * The VectorStore contract, run against every adapter. The embedded store runs three times: as small
 * indexes are (exact search), with its HNSW threshold lowered so the same cases go through the
 * graph, and so again on a thread of its own, as the service runs it. Qdrant's half needs a
 * server: it runs when QDRANT_URL is set.
 *
 * End users (decisions §14): a search with an audience finds that user's items and the shared
 * ones, never another user's; without an audience it finds every item of the agent.
 */
import { QdrantClient } from '@qdrant/js-client-rest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EmbeddedVectorStore } from '../../src/vectors/embedded-vector-store.js';
import { QdrantVectorStore } from '../../src/vectors/qdrant-vector-store.js';
import { ThreadedVectorStore } from '../../src/vectors/threaded-vector-store.js';
import { type VectorAudience, type VectorStore } from '../../src/vectors/vector-store.js';
import { bruteForce, FakeDatabase, mix, newOwner, randomUnit, record, seededRandom, temporaryDirectory, userRecord } from './vector-fixtures.js';

const DIMENSIONS = 16;
const qdrantUrl = process.env.QDRANT_URL;

interface Adapter {
  name: string;
  skip: boolean;
  create(source: FakeDatabase): Promise<{ store: VectorStore; dispose: () => Promise<void> }>;
}

const adapters: Adapter[] = [
  {
    name: 'embedded, exact search, in memory',
    skip: false,
    create: async (source) => {
      const store = new EmbeddedVectorStore({ directory: undefined, dimensions: DIMENSIONS, model: 'contract' });
      await store.open(source);
      return { store, dispose: () => store.close() };
    },
  },
  ...[
    { name: 'embedded, HNSW graph, persisted', Store: EmbeddedVectorStore },
    { name: 'embedded on its own thread, HNSW graph, persisted', Store: ThreadedVectorStore },
  ].map(({ name, Store }) => ({
    name,
    skip: false,
    create: async (source: FakeDatabase) => {
      const directory = await temporaryDirectory();
      const store = new Store({ directory: directory.path, dimensions: DIMENSIONS, model: 'contract', exactSearchMaxVectors: 2 });
      await store.open(source);
      return { store, dispose: async () => (await store.close(), await directory.remove()) };
    },
  })),
  {
    name: 'qdrant',
    skip: qdrantUrl === undefined,
    create: async (source) => {
      // A model name of its own gives this run a fresh collection, dropped afterwards.
      const store = new QdrantVectorStore({ url: qdrantUrl ?? '', model: `contract-${Date.now()}`, dimensions: DIMENSIONS, timeoutMs: 10_000 });
      await store.open(source);
      const dispose = async (): Promise<void> => {
        await store.close();
        await new QdrantClient({ url: qdrantUrl ?? '', checkCompatibility: false }).deleteCollection(store.collection);
      };
      return { store, dispose };
    },
  },
];

if (qdrantUrl === undefined) console.info('VectorStore contract: the qdrant cases are skipped because QDRANT_URL is not set.');

describe.each(adapters)('VectorStore contract: $name', (adapter) => {
  describe.skipIf(adapter.skip)(adapter.skip ? 'skipped: QDRANT_URL is not set' : 'cases', () => {
    let store: VectorStore;
    let dispose: () => Promise<void>;
    const seeded = new FakeDatabase();
    const seededOwner = newOwner();
    const seededRecord = record(seededOwner, mix(DIMENSIONS, [5]));
    const seededUsersOwner = newOwner();
    const seededUsersRecord = userRecord(seededUsersOwner, 'seeded-user', mix(DIMENSIONS, [5]));
    seeded.put(seededRecord, seededUsersRecord);

    beforeAll(async () => {
      ({ store, dispose } = await adapter.create(seeded));
    });
    afterAll(async () => dispose());

    const search = (owner: { tenantId: string; agentId: string }, vector: Float32Array, limit = 10, memoryTypes?: string[]) =>
      store.search({ ...owner, vector, limit, ...(memoryTypes ? { memoryTypes } : {}) });
    /** The ids found for `audience`, best first. */
    const idsFor = async (owner: { tenantId: string; agentId: string }, audience: VectorAudience, vector: Float32Array, limit = 10, memoryTypes?: string[]) =>
      (await store.search({ ...owner, vector, limit, audience, ...(memoryTypes ? { memoryTypes } : {}) })).map((hit) => hit.id);

    it('is filled from its source at open', async () => {
      expect(await search(seededOwner, mix(DIMENSIONS, [5]))).toEqual([{ id: seededRecord.id, score: expect.closeTo(1, 4) }]);
    });

    it("is filled with end users' items from its source at open, each kept to its user", async () => {
      const vector = mix(DIMENSIONS, [5]);
      expect(await idsFor(seededUsersOwner, { userId: 'seeded-user' }, vector)).toEqual([seededUsersRecord.id]);
      expect(await idsFor(seededUsersOwner, { userId: 'someone-else' }, vector)).toEqual([]);
      expect(await idsFor(seededUsersOwner, { userId: null }, vector)).toEqual([]);
      expect((await search(seededUsersOwner, vector)).map((hit) => hit.id)).toEqual([seededUsersRecord.id]);
    });

    it('returns the nearest first, with cosine scores', async () => {
      const owner = newOwner();
      const [same, between, orthogonal, opposite] = [
        record(owner, mix(DIMENSIONS, [0])),
        record(owner, mix(DIMENSIONS, [0, 1])),
        record(owner, mix(DIMENSIONS, [2])),
        record(owner, mix(DIMENSIONS, [0], [-1])),
      ];
      await store.upsert([orthogonal, opposite, same, between]);
      const hits = await search(owner, mix(DIMENSIONS, [0]));
      expect(hits.map((hit) => hit.id)).toEqual([same.id, between.id, orthogonal.id, opposite.id]);
      expect(hits.map((hit) => hit.score)).toEqual([expect.closeTo(1, 4), expect.closeTo(Math.SQRT1_2, 4), expect.closeTo(0, 4), expect.closeTo(-1, 4)]);
    });

    it('never returns another tenant’s or agent’s items, even with identical vectors', async () => {
      const tenantOne = newOwner();
      const sameAgentIdOtherTenant = { tenantId: newOwner().tenantId, agentId: tenantOne.agentId };
      const otherAgentSameTenant = { tenantId: tenantOne.tenantId, agentId: newOwner().agentId };
      const vector = mix(DIMENSIONS, [3, 4]);
      const owners = [tenantOne, sameAgentIdOtherTenant, otherAgentSameTenant];
      const records = owners.map((owner) => record(owner, vector));
      await store.upsert(records);
      for (const [index, owner] of owners.entries()) {
        expect(await search(owner, vector)).toEqual([{ id: records[index]!.id, score: expect.closeTo(1, 4) }]);
      }
      expect(await search(newOwner(), vector)).toEqual([]);
    });

    it("scores the items asked for by id, only its own agent's, leaving out the ones it does not hold", async () => {
      const owner = newOwner();
      const [same, between, orthogonal] = [record(owner, mix(DIMENSIONS, [0])), record(owner, mix(DIMENSIONS, [0, 1])), record(owner, mix(DIMENSIONS, [2]))];
      const otherAgents = record({ tenantId: owner.tenantId, agentId: newOwner().agentId }, mix(DIMENSIONS, [0]));
      await store.upsert([same, between, orthogonal, otherAgents]);
      const ids = [between.id, orthogonal.id, otherAgents.id, record(owner, mix(DIMENSIONS, [0])).id, same.id];
      const hits = await store.similarities({ ...owner, vector: mix(DIMENSIONS, [0]), ids });
      expect(new Map(hits.map((hit) => [hit.id, hit.score]))).toEqual(
        new Map([
          [same.id, expect.closeTo(1, 4)],
          [between.id, expect.closeTo(Math.SQRT1_2, 4)],
          [orthogonal.id, expect.closeTo(0, 4)],
        ]),
      );
      expect(await store.similarities({ ...owner, vector: mix(DIMENSIONS, [0]), ids: [] })).toEqual([]);
    });

    it('keeps to the memory types asked for', async () => {
      const owner = newOwner();
      const episodic = record(owner, mix(DIMENSIONS, [0]), 'episodic');
      const semantic = record(owner, mix(DIMENSIONS, [0, 1]), 'semantic');
      const procedural = record(owner, mix(DIMENSIONS, [0, 2], [1, 2]), 'procedural');
      await store.upsert([episodic, semantic, procedural]);
      const query = mix(DIMENSIONS, [0]);
      expect((await search(owner, query, 10, ['semantic'])).map((hit) => hit.id)).toEqual([semantic.id]);
      expect((await search(owner, query, 10, ['procedural', 'semantic'])).map((hit) => hit.id)).toEqual([semantic.id, procedural.id]);
      expect((await search(owner, query, 10)).map((hit) => hit.id)).toEqual([episodic.id, semantic.id, procedural.id]);
      expect(await search(owner, query, 10, [])).toEqual([]);
      expect(await search(owner, query, 10, ['working'])).toEqual([]);
    });

    it('forgets deleted items, and ignores ids it never had', async () => {
      const owner = newOwner();
      const kept = record(owner, mix(DIMENSIONS, [0]));
      const deleted = record(owner, mix(DIMENSIONS, [0, 1]));
      await store.upsert([kept, deleted]);
      await store.delete([deleted.id, record(owner, kept.vector).id]);
      expect((await search(owner, mix(DIMENSIONS, [0, 1]))).map((hit) => hit.id)).toEqual([kept.id]);
    });

    it('deletes one agent’s vectors and nobody else’s', async () => {
      const gone = newOwner();
      const neighbour = { tenantId: gone.tenantId, agentId: newOwner().agentId };
      const vector = mix(DIMENSIONS, [6]);
      const neighbourRecord = record(neighbour, vector);
      await store.upsert([record(gone, vector), record(gone, mix(DIMENSIONS, [7])), neighbourRecord]);
      await store.deleteAgent(gone.tenantId, gone.agentId);
      expect(await search(gone, vector)).toEqual([]);
      expect((await search(neighbour, vector)).map((hit) => hit.id)).toEqual([neighbourRecord.id]);
      const again = record(gone, vector);
      await store.upsert([again]);
      expect((await search(gone, vector)).map((hit) => hit.id)).toEqual([again.id]);
    });

    it('replaces the vector and type of an id upserted again', async () => {
      const owner = newOwner();
      const first = record(owner, mix(DIMENSIONS, [0]), 'episodic');
      const other = record(owner, mix(DIMENSIONS, [0, 1]));
      await store.upsert([first, other]);
      await store.upsert([{ ...first, vector: mix(DIMENSIONS, [9]), memoryType: 'semantic' }]);
      const nearOld = await search(owner, mix(DIMENSIONS, [0]));
      expect(nearOld.map((hit) => hit.id)).toEqual([other.id, first.id]);
      expect(nearOld[1]?.score).toBeCloseTo(0, 4);
      expect(await search(owner, mix(DIMENSIONS, [9]), 10, ['semantic'])).toEqual([
        { id: first.id, score: expect.closeTo(1, 4) },
        { id: other.id, score: expect.closeTo(0, 4) },
      ]);
      expect(await search(owner, mix(DIMENSIONS, [9]), 10, ['episodic'])).toEqual([]);
    });

    it('returns at most `limit` hits: the best ones, in order', async () => {
      const owner = newOwner();
      const random = seededRandom(7);
      const records = Array.from({ length: 30 }, () => record(owner, randomUnit(random, DIMENSIONS)));
      await store.upsert(records);
      const query = randomUnit(random, DIMENSIONS);
      const hits = await search(owner, query, 5);
      const expected = bruteForce(records, query, 5);
      expect(hits.map((hit) => hit.id)).toEqual(expected.map((hit) => hit.id));
      hits.forEach((hit, index) => expect(hit.score).toBeCloseTo(expected[index]!.score, 4));
      expect(await search(owner, query, 0)).toEqual([]);
    });

    it("never returns one end user's items to another's audience, even with identical vectors", async () => {
      const owner = newOwner();
      const vector = mix(DIMENSIONS, [0]);
      const shared = record(owner, mix(DIMENSIONS, [0, 3], [3, 1]));
      const alices = userRecord(owner, 'alice', vector);
      const bobs = userRecord(owner, 'bob', vector);
      // A user id that is a prefix of another, and one that looks like a memory type: still apart.
      const alicias = userRecord(owner, 'alice2', vector);
      const semantics = userRecord(owner, 'semantic', vector);
      await store.upsert([shared, alices, bobs, alicias, semantics]);
      expect(await idsFor(owner, { userId: 'alice' }, vector)).toEqual([alices.id, shared.id]);
      expect(await idsFor(owner, { userId: 'bob' }, vector)).toEqual([bobs.id, shared.id]);
      expect(await idsFor(owner, { userId: 'alice2' }, vector)).toEqual([alicias.id, shared.id]);
      expect(await idsFor(owner, { userId: 'semantic' }, vector)).toEqual([semantics.id, shared.id]);
      expect(await idsFor(owner, { userId: 'carol' }, vector)).toEqual([shared.id]);
      expect(await idsFor(owner, { userId: null }, vector)).toEqual([shared.id]);
      // An operator's search (no audience) sees every item of the agent.
      const everything = (await search(owner, vector)).map((hit) => hit.id);
      expect(everything).toHaveLength(5);
      expect(new Set(everything)).toEqual(new Set([shared.id, alices.id, bobs.id, alicias.id, semantics.id]));
      expect(everything[4]).toBe(shared.id);
      // The audience never widens tenant and agent isolation.
      expect(await idsFor({ tenantId: owner.tenantId, agentId: newOwner().agentId }, { userId: 'alice' }, vector)).toEqual([]);
    });

    it('combines the audience with memory types', async () => {
      const owner = newOwner();
      const query = mix(DIMENSIONS, [0]);
      const alicesEpisode = userRecord(owner, 'alice', mix(DIMENSIONS, [0]), 'episodic');
      const alicesFact = userRecord(owner, 'alice', mix(DIMENSIONS, [0, 1], [4, 1]), 'semantic');
      const sharedEpisode = record(owner, mix(DIMENSIONS, [0, 1], [3, 1]), 'episodic');
      const sharedFact = record(owner, mix(DIMENSIONS, [0, 1], [2, 1]), 'semantic');
      const bobsFact = userRecord(owner, 'bob', mix(DIMENSIONS, [0, 1], [1, 1]), 'semantic');
      await store.upsert([alicesEpisode, alicesFact, sharedEpisode, sharedFact, bobsFact]);
      expect(await idsFor(owner, { userId: 'alice' }, query, 10, ['semantic'])).toEqual([alicesFact.id, sharedFact.id]);
      expect(await idsFor(owner, { userId: 'alice' }, query, 10, ['episodic', 'semantic'])).toEqual([alicesEpisode.id, alicesFact.id, sharedEpisode.id, sharedFact.id]);
      expect(await idsFor(owner, { userId: 'bob' }, query, 10, ['semantic'])).toEqual([sharedFact.id, bobsFact.id]);
      expect(await idsFor(owner, { userId: 'bob' }, query, 10, ['episodic'])).toEqual([sharedEpisode.id]);
      expect(await idsFor(owner, { userId: null }, query, 10, ['semantic'])).toEqual([sharedFact.id]);
      expect(await idsFor(owner, { userId: 'alice' }, query, 10, [])).toEqual([]);
      expect(await idsFor(owner, { userId: 'alice' }, query, 10, ['working'])).toEqual([]);
      expect((await search(owner, query, 10, ['semantic'])).map((hit) => hit.id)).toEqual([alicesFact.id, sharedFact.id, bobsFact.id]);
    });

    it("finds an end user's few items among many other users' items", async () => {
      const owner = newOwner();
      const random = seededRandom(21);
      const others = Array.from({ length: 1_200 }, (_, index) => userRecord(owner, `user-${index % 40}`, randomUnit(random, DIMENSIONS)));
      const needles = Array.from({ length: 8 }, () => userRecord(owner, 'needle', randomUnit(random, DIMENSIONS)));
      const shared = Array.from({ length: 4 }, () => record(owner, randomUnit(random, DIMENSIONS)));
      await store.upsert([...others.slice(0, 600), ...needles, ...shared, ...others.slice(600)]);
      const visible = [...needles, ...shared];
      for (let round = 0; round < 5; round += 1) {
        const query = randomUnit(random, DIMENSIONS);
        expect(await idsFor(owner, { userId: 'needle' }, query, 20)).toEqual(bruteForce(visible, query, 20).map((hit) => hit.id));
        expect(await idsFor(owner, { userId: 'needle' }, query, 3)).toEqual(bruteForce(visible, query, 3).map((hit) => hit.id));
        expect(await idsFor(owner, { userId: null }, query, 20)).toEqual(bruteForce(shared, query, 20).map((hit) => hit.id));
        const neighbours = await idsFor(owner, { userId: 'user-7' }, query, 50);
        expect(neighbours).toHaveLength(34);
        expect(neighbours.filter((id) => needles.some((needle) => needle.id === id))).toEqual([]);
      }
    });

    it("forgets a user's deleted items at once, and moves an item upserted for another user", async () => {
      const owner = newOwner();
      const vector = mix(DIMENSIONS, [2]);
      const [kept, deleted, moved] = [userRecord(owner, 'alice', vector), userRecord(owner, 'alice', mix(DIMENSIONS, [2, 3])), userRecord(owner, 'alice', mix(DIMENSIONS, [2, 4]))];
      await store.upsert([kept, deleted, moved]);
      await store.delete([deleted.id]);
      expect(await idsFor(owner, { userId: 'alice' }, vector)).toEqual([kept.id, moved.id]);
      expect((await search(owner, vector)).map((hit) => hit.id)).toEqual([kept.id, moved.id]);
      await store.upsert([{ ...moved, userId: 'bob' }]);
      expect(await idsFor(owner, { userId: 'alice' }, vector)).toEqual([kept.id]);
      expect(await idsFor(owner, { userId: 'bob' }, vector)).toEqual([moved.id]);
      await store.upsert([{ ...moved, userId: null }]);
      expect(await idsFor(owner, { userId: 'alice' }, vector)).toEqual([kept.id, moved.id]);
      expect(await idsFor(owner, { userId: null }, vector)).toEqual([moved.id]);
    });

    it('finds nothing in an empty index', async () => {
      expect(await search(newOwner(), mix(DIMENSIONS, [0]))).toEqual([]);
    });

    it('refuses vectors of another dimension', async () => {
      const owner = newOwner();
      await expect(store.upsert([record(owner, mix(DIMENSIONS + 1, [0]))])).rejects.toThrow(RangeError);
      await expect(search(owner, mix(DIMENSIONS - 1, [0]))).rejects.toThrow(RangeError);
    });
  });
});
