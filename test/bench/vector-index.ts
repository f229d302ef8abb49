/**
 * The embedded vector index (usearch) for one agent, as the memory service meets it:
 *  - build: open() on a database of N vectors, until the HNSW graph is complete,
 *  - search: p50 / p95 of top-10 queries through the store, and recall@10 against brute force,
 *  - restart: close() (saves rows and graph), then open() on the saved files, until searchable
 *    by the graph again.
 * Data: 384-dimension unit vectors (BENCH_VECTOR_DIMENSIONS to choose), seeded. 90% are "embeddings" (a point near one of 512 topics
 * in a 32-dimension latent space, projected to 384 dimensions, plus isotropic noise) and 10% are
 * uniformly random (distractors); queries are half paraphrases (a stored embedding plus noise)
 * and half fresh points of a topic. `distribution: 'uniform'` (BENCH_VECTOR_DISTRIBUTION=uniform)
 * makes every vector and query uniformly random instead: no structure at all, HNSW's worst case.
 * Run: node --import tsx test/bench/vector-index.ts   (BENCH_VECTOR_SIZES=1000,10000 to pick sizes)
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cosine, normalised } from '../../services/agent-memory/src/models/embedder.js';
import { EmbeddedVectorStore } from '../../services/agent-memory/src/vectors/embedded-vector-store.js';
import { type VectorRecord, type VectorSource } from '../../services/agent-memory/src/vectors/vector-store.js';
import { seededRandom } from '@agent-platform/kit/testing';

// The hashing embedder's width by default; BENCH_VECTOR_DIMENSIONS=484 measures the hybrid embedder's.
const DIMENSIONS = Number(process.env.BENCH_VECTOR_DIMENSIONS ?? 384);
const LATENT = 32;
const TOPICS = 512;
const TOP_K = 10;
const OWNER = { tenantId: 'tnt_bench', agentId: 'agt_bench' };

export interface VectorIndexBenchOptions {
  sizes?: number[];
  /** Top-10 queries per size (at least 200 for a meaningful p95). */
  queries?: number;
  seed?: number;
  distribution?: 'embeddings' | 'uniform';
}

export interface VectorIndexBenchRow {
  vectors: number;
  searchMode: 'exact' | 'hnsw';
  buildMs: number;
  p50Ms: number;
  p95Ms: number;
  recallAt10: number;
  closeMs: number;
  restartMs: number;
}

function generator(seed: number) {
  const random = seededRandom(seed);
  const gauss = (): number => Math.sqrt(-2 * Math.log(random() || Number.MIN_VALUE)) * Math.cos(2 * Math.PI * random());
  const projection = Array.from({ length: LATENT }, () => Float64Array.from({ length: DIMENSIONS }, gauss));
  const topics = Array.from({ length: TOPICS }, () => Float64Array.from({ length: LATENT }, gauss));
  const unit = (values: Float64Array): Float32Array => normalised(values) ?? unit(Float64Array.from({ length: DIMENSIONS }, gauss));
  /** Relative isotropic noise added to a direction, as a fraction of its length. */
  const jitter = (vector: ArrayLike<number>, amount: number): Float32Array =>
    unit(Float64Array.from({ length: DIMENSIONS }, (_, index) => (vector[index] ?? 0) + (amount / Math.sqrt(DIMENSIONS)) * gauss()));
  const embedding = (): Float32Array => {
    const topic = topics[Math.floor(random() * TOPICS)] ?? topics[0]!;
    const latent = topic.map((value) => value + 0.6 * gauss());
    const values = new Float64Array(DIMENSIONS);
    latent.forEach((weight, axis) => projection[axis]!.forEach((value, index) => (values[index] = (values[index] ?? 0) + weight * value)));
    return jitter(unit(values), 0.2);
  };
  const uniform = (): Float32Array => unit(Float64Array.from({ length: DIMENSIONS }, gauss));
  return { random, embedding, uniform, jitter };
}

export function dataset(size: number, queries: number, seed: number, uniformOnly: boolean): { records: VectorRecord[]; queries: Float32Array[] } {
  const make = generator(seed);
  const records: VectorRecord[] = [];
  const embeddings: Float32Array[] = [];
  if (uniformOnly) {
    for (let index = 0; index < size; index += 1) records.push({ ...OWNER, id: `mem_${String(index).padStart(26, '0')}`, memoryType: 'semantic', userId: null, vector: make.uniform() });
    return { records, queries: Array.from({ length: queries }, make.uniform) };
  }
  for (let index = 0; index < size; index += 1) {
    const isEmbedding = make.random() >= 0.1;
    const vector = isEmbedding ? make.embedding() : make.uniform();
    if (isEmbedding) embeddings.push(vector);
    records.push({ ...OWNER, id: `mem_${String(index).padStart(26, '0')}`, memoryType: 'semantic', userId: null, vector });
  }
  const asked = Array.from({ length: queries }, (_, index) =>
    index % 2 === 0 ? make.jitter(embeddings[Math.floor(make.random() * embeddings.length)]!, 0.3) : make.embedding(),
  );
  return { records, queries: asked };
}

function sourceOf(records: readonly VectorRecord[]): VectorSource {
  const byId = new Map(records.map((entry) => [entry.id, entry]));
  return {
    ids: () => Promise.resolve([...byId.keys()]),
    records: (ids) => Promise.resolve(ids.flatMap((id) => byId.get(id) ?? [])),
  };
}

/** The exact top 10 by cosine, scanning everything. */
function exactTop(records: readonly VectorRecord[], query: Float32Array): Set<string> {
  const best: { id: string; score: number }[] = [];
  for (const candidate of records) {
    const score = cosine(query, candidate.vector);
    if (best.length === TOP_K && score <= best[TOP_K - 1]!.score) continue;
    best.push({ id: candidate.id, score });
    best.sort((a, b) => b.score - a.score);
    if (best.length > TOP_K) best.pop();
  }
  return new Set(best.map((hit) => hit.id));
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

async function benchSize(size: number, queryCount: number, seed: number, uniformOnly: boolean): Promise<VectorIndexBenchRow> {
  const { records, queries } = dataset(size, queryCount, seed, uniformOnly);
  const source = sourceOf(records);
  const directory = await mkdtemp(join(tmpdir(), 'agent-memory-vector-bench-'));
  try {
    const options = { directory, dimensions: DIMENSIONS, model: 'bench', saveIntervalMs: 3_600_000 };
    let started = performance.now();
    const store = new EmbeddedVectorStore(options);
    await store.open(source);
    await store.whenIndexed();
    const buildMs = performance.now() - started;
    const searchMode = store.describeAgent(OWNER.tenantId, OWNER.agentId)?.searchMode ?? 'exact';

    // Timed back to back; the brute-force scans for recall come after, so they do not evict the
    // index from the CPU caches between two timed queries.
    const latencies: number[] = [];
    const answers: string[][] = [];
    for (const query of queries) {
      const before = performance.now();
      const hits = await store.search({ ...OWNER, vector: query, limit: TOP_K });
      latencies.push(performance.now() - before);
      answers.push(hits.map((hit) => hit.id));
    }
    latencies.sort((a, b) => a - b);
    let found = 0;
    queries.forEach((query, index) => {
      const exact = exactTop(records, query);
      found += (answers[index] ?? []).filter((id) => exact.has(id)).length;
    });

    started = performance.now();
    await store.close();
    const closeMs = performance.now() - started;
    started = performance.now();
    const restarted = new EmbeddedVectorStore(options);
    await restarted.open(source);
    await restarted.whenIndexed();
    await restarted.search({ ...OWNER, vector: queries[0]!, limit: TOP_K });
    const restartMs = performance.now() - started;
    await restarted.close();
    return { vectors: size, searchMode, buildMs, p50Ms: percentile(latencies, 50), p95Ms: percentile(latencies, 95), recallAt10: found / (queries.length * TOP_K), closeMs, restartMs };
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

export async function benchVectorIndex(options: VectorIndexBenchOptions = {}): Promise<VectorIndexBenchRow[]> {
  const rows: VectorIndexBenchRow[] = [];
  for (const size of options.sizes ?? [1_000, 10_000, 100_000]) {
    rows.push(await benchSize(size, Math.max(options.queries ?? 200, 1), options.seed ?? 42, options.distribution === 'uniform'));
  }
  return rows;
}

export function printTable(rows: readonly VectorIndexBenchRow[], distribution: string): void {
  const seconds = (ms: number): string => `${(ms / 1000).toFixed(2)} s`;
  const table = rows.map((row) => ({
    vectors: row.vectors.toLocaleString('en'),
    search: row.searchMode,
    build: seconds(row.buildMs),
    'p50 ms': row.p50Ms.toFixed(3),
    'p95 ms': row.p95Ms.toFixed(3),
    'recall@10': row.recallAt10.toFixed(4),
    'close (save)': seconds(row.closeMs),
    'restart (open)': seconds(row.restartMs),
  }));
  console.log(`vector index, one agent, ${DIMENSIONS} dimensions, top ${TOP_K}, ${distribution} vectors`);
  console.table(table);
}

const invokedDirectly = process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (invokedDirectly) {
  const sizes = process.env.BENCH_VECTOR_SIZES?.split(',').map(Number);
  const queries = Number(process.env.BENCH_VECTOR_QUERIES ?? 200);
  const distribution = process.env.BENCH_VECTOR_DISTRIBUTION === 'uniform' ? 'uniform' : 'embeddings';
  printTable(await benchVectorIndex({ ...(sizes ? { sizes } : {}), queries, distribution }), distribution);
}
