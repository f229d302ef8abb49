/**
 * One agent's index while its HNSW graph is still being filled: searches stay right (the graph's
 * part and the queued part are both searched), and the build is not starved by those searches.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { AgentVectorIndex } from '../../src/vectors/agent-vector-index.js';
import { DEFAULT_HNSW_PARAMS, HnswGraph } from '../../src/vectors/hnsw-graph.js';
import { partitionLabel } from '../../src/vectors/partition-labels.js';
import { VectorArena } from '../../src/vectors/vector-arena.js';
import { bruteForce, newOwner, randomUnit, record, seededRandom } from './vector-fixtures.js';

const DIMENSIONS = 384;

/** An index of `total` random vectors whose graph holds the first `built` of them and is filling with the rest. */
async function partlyBuilt(total: number, built: number, exactSearchMaxVectors: number) {
  const random = seededRandom(7);
  const owner = newOwner();
  const records = Array.from({ length: total }, (_, index) => record(owner, randomUnit(random, DIMENSIONS), index % 4 === 0 ? 'episodic' : 'semantic'));
  const arena = new VectorArena(DIMENSIONS);
  const keys = records.map((item) => arena.put(item.id, partitionLabel(item.memoryType, item.userId), item.vector).key);
  const index = new AgentVectorIndex(owner.tenantId, owner.agentId, { dimensions: DIMENSIONS, exactSearchMaxVectors, hnsw: DEFAULT_HNSW_PARAMS, onGraphFailure: () => {} }, arena);
  const graph = index.createGraph();
  graph.enqueue(keys.slice(0, built));
  await graph.whenReady();
  // As at an open whose saved graph lacks the newest rows: the rest is queued and drained in slices.
  index.adoptGraph(graph, keys.slice(0, built));
  return { index, graph, records, keys, random };
}

describe('AgentVectorIndex while its graph is being filled', () => {
  it('finds what the graph holds and what is still queued, as exact search does', async () => {
    const { index, graph, records, keys, random } = await partlyBuilt(3_000, 2_200, 1_000);
    // Synchronously after adoptGraph: the first slice cannot have inserted 800 vectors of 384 dimensions.
    expect(index.searchMode).toBe('exact');
    expect(graph.pendingCount).toBeGreaterThan(0);
    expect(graph.pendingCount).toBeLessThanOrEqual(1_000);

    const queued = records.filter((_, at) => !graph.contains(keys[at]!));
    expect(queued.length).toBeGreaterThan(0);
    for (const item of queued.slice(0, 20)) expect(index.search(item.vector, 1)[0]?.id).toBe(item.id);

    let found = 0;
    let foundEpisodic = 0;
    const episodic = records.filter((item) => item.memoryType === 'episodic');
    const queries = 30;
    for (let query = 0; query < queries; query += 1) {
      const vector = randomUnit(random, DIMENSIONS);
      const exact = new Set(bruteForce(records, vector, 10).map((hit) => hit.id));
      found += index.search(vector, 10).filter((hit) => exact.has(hit.id)).length;
      const exactEpisodic = new Set(bruteForce(episodic, vector, 10).map((hit) => hit.id));
      const hits = index.search(vector, 10, { memoryTypes: ['episodic'] });
      expect(hits).toHaveLength(10);
      foundEpisodic += hits.filter((hit) => exactEpisodic.has(hit.id)).length;
    }
    expect(graph.ready).toBe(false);
    expect(found / (queries * 10)).toBeGreaterThanOrEqual(0.95);
    expect(foundEpisodic / (queries * 10)).toBeGreaterThanOrEqual(0.95);
    await graph.whenReady();
    expect(index.searchMode).toBe('hnsw');
  });

  it('gives the build back the time fallback searches took, in longer slices', async () => {
    const random = seededRandom(3);
    const vectors = Array.from({ length: 4_000 }, () => randomUnit(random, DIMENSIONS));
    const graph = new HnswGraph(DIMENSIONS, DEFAULT_HNSW_PARAMS, (key) => vectors[key]);
    graph.enqueue(vectors.map((_, key) => key));
    // The first slice ran inside enqueue; each later turn runs one more.
    const grownInOneTurn = async (): Promise<number> => {
      const before = graph.size;
      await nextTurn();
      return graph.size - before;
    };
    const plain = await grownInOneTurn();
    graph.owe(45);
    const repaying = await grownInOneTurn();
    graph.cancel();
    expect(plain).toBeGreaterThan(0);
    // A 5 ms slice against a 50 ms one: ten times as many on a quiet machine; on a loaded one
    // (2× seen under CI) still more.
    expect(repaying).toBeGreaterThan(plain);
  });
});

describe('AgentVectorIndex given vectors it holds', () => {
  it('leaves its graph alone when given what it holds already, and replaces what changed', async () => {
    const { index, graph, records, keys, random } = await partlyBuilt(1_500, 1_500, 1_000);
    await graph.whenReady();
    const asIndexed = (item: (typeof records)[number]) => ({ id: item.id, memoryType: item.memoryType, userId: item.userId, vector: item.vector });
    // A replica applying its own writes again from the database's feed (decisions §18.6): the same keys stay in the graph.
    index.upsert(records.slice(0, 200).map(asIndexed));
    expect(keys.slice(0, 200).every((key) => graph.contains(key))).toBe(true);
    expect(index.searchMode).toBe('hnsw');

    const changed = { ...asIndexed(records[0]!), vector: randomUnit(random, DIMENSIONS) };
    index.upsert([changed, asIndexed(records[1]!)]);
    expect([graph.contains(keys[0]!), graph.contains(keys[1]!)]).toEqual([false, true]);
    await graph.whenReady();
    expect(index.search(changed.vector, 1)[0]?.id).toBe(changed.id);
  });
});
