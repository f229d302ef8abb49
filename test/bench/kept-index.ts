/**
 * The embedded index's own search over the memory agent-memory.ts kept (BENCH_MEMORY_DATA_DIR):
 * the agent's rows and HNSW graph as that platform saved them, copied and opened by an
 * EmbeddedVectorStore in this process, then searched one query at a time for the 20 nearest (what
 * a top-5 search asks of the index): the bench's query 300 times, and 200 questions on the
 * corpus's subjects (topics.ts) three times each. Real vectors of the real corpus, where
 * vector-index.ts's are synthetic: what an embedder's vectors cost the index.
 * Run: BENCH_MEMORY_DATA_DIR=<dir> node --conditions=agent-platform-source --import tsx test/bench/kept-index.ts
 * The model is the one the rows were stored with (`hybrid-sg100-v1` or `hashing`).
 */
import { cp, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Embedder } from '../../services/agent-memory/src/models/embedder.js';
import { HashingEmbedder } from '../../services/agent-memory/src/models/hashing-embedder.js';
import { HybridEmbedder } from '../../services/agent-memory/src/models/hybrid-embedder.js';
import { EmbeddedVectorStore } from '../../services/agent-memory/src/vectors/embedded-vector-store.js';
import { readRows, type StoredRows } from '../../services/agent-memory/src/vectors/rows-file.js';
import { seededRandom } from '@agent-platform/kit/testing';
import { TOPICS } from './topics.js';

/** agent-memory.ts's query; the index is asked for CANDIDATES_MIN (20) of a top-5 search. */
const BENCH_QUERY = 'where is the refund of ref_3_1200';
const LIMIT = 20;
const EMBEDDERS: readonly Embedder[] = [new HybridEmbedder(), new HashingEmbedder()];

/** The one agent's rows under a data directory's vector index, and the embedder that made them. */
async function keptAgent(dataDir: string): Promise<{ root: string; rows: StoredRows; embedder: Embedder }> {
  const vectors = join(dataDir, 'vectors');
  const [database] = await readdir(vectors);
  const root = join(vectors, database!);
  const [tenant] = await readdir(root);
  const [agent] = await readdir(join(root, tenant!));
  for (const embedder of EMBEDDERS) {
    const reading = await readRows(join(root, tenant!, agent!), { model: embedder.model, dimensions: embedder.dimensions });
    if (reading.ok) return { root, rows: reading.rows, embedder };
  }
  throw new Error(`${root}/${tenant}/${agent}: rows of neither ${EMBEDDERS.map((embedder) => embedder.model).join(' nor ')}`);
}

/** The bench's query, then `count` questions on the corpus's subjects, some naming an id. */
function queries(count: number): string[] {
  const random = seededRandom(7);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const asked = [BENCH_QUERY];
  for (let index = 0; index < count; index += 1) {
    const topic = pick(TOPICS);
    asked.push(
      index % 2 === 0
        ? `which ${pick(topic.nouns)} ${pick(topic.verbs)} the ${pick(topic.nouns)} of ref_${Math.floor(random() * 60)}_${Math.floor(random() * 8_000)}`
        : `what about the ${pick(topic.adjectives)} ${pick(topic.nouns)} that ${pick(topic.verbs)} the ${pick(topic.nouns)}?`,
    );
  }
  return asked;
}

function summary(ms: number[]): string {
  const sorted = [...ms].sort((a, b) => a - b);
  const at = (fraction: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))]!.toFixed(3);
  return `p50 ${at(0.5)} ms, p95 ${at(0.95)} ms, mean ${(sorted.reduce((sum, value) => sum + value, 0) / sorted.length).toFixed(3)} ms`;
}

const dataDir = process.env.BENCH_MEMORY_DATA_DIR;
if (dataDir === undefined) throw new Error('BENCH_MEMORY_DATA_DIR: the data directory agent-memory.ts kept');
const { root, rows, embedder } = await keptAgent(dataDir);
// A copy: opening reconciles and may rewrite files, which the kept platform's must not see.
const copy = await mkdtemp(join(tmpdir(), 'agent-memory-kept-index-'));
try {
  await cp(root, copy, { recursive: true });
  const store = new EmbeddedVectorStore({ directory: copy, dimensions: embedder.dimensions, model: embedder.model, saveIntervalMs: 3_600_000 });
  // Every id is in the rows already: nothing to fetch, so the store opens on its files alone.
  await store.open({ ids: () => Promise.resolve(rows.snapshot.ids), records: () => Promise.resolve([]) });
  await store.whenIndexed();
  const owner = { tenantId: rows.tenantId, agentId: rows.agentId };
  const mode = store.describeAgent(owner.tenantId, owner.agentId)?.searchMode;
  const [bench, ...varied] = await embedder.embed(queries(200));
  const timed = async (vector: Float32Array): Promise<number> => {
    const started = performance.now();
    await store.search({ ...owner, vector, limit: LIMIT });
    return performance.now() - started;
  };
  // Each once, unmeasured, first: the JIT, and the graph's pages in memory.
  for (const vector of [bench!, ...varied]) await timed(vector);
  const benchMs: number[] = [];
  for (let round = 0; round < 300; round += 1) benchMs.push(await timed(bench!));
  const variedMs: number[] = [];
  for (let round = 0; round < 3; round += 1) for (const vector of varied) variedMs.push(await timed(vector));
  console.log(`kept index of ${rows.snapshot.ids.length.toLocaleString('en')} ${embedder.model} vectors (${embedder.dimensions} dimensions, ${mode} search), top ${LIMIT}, one at a time:`);
  console.log(`  the bench's query: ${summary(benchMs)}`);
  console.log(`  200 questions on the corpus's subjects: ${summary(variedMs)}`);
  await store.close();
} finally {
  await rm(copy, { recursive: true, force: true });
}
