/**
 * The built-in offline embedders, in this process and without the platform:
 *  - loading the hybrid embedder's word vectors, each way in a fresh process of its own: from the
 *    derived cache (what every process after the first does) and from the package's JSON (the
 *    first process, or one that cannot write the cache), with the RSS it adds;
 *  - throughput on ~1,000-character chunks of a document, as documents are chunked (issue 43: a
 *    100-page PDF, ~300 chunks, embedded within a few seconds), for `hybrid-sg100-v1` and `hashing`.
 * Run: node --conditions=agent-platform-source --import tsx test/bench/embedder.ts
 */
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { chunkText } from '../../services/agent-memory/src/documents/chunking.js';
import type { Embedder } from '../../services/agent-memory/src/models/embedder.js';
import { HashingEmbedder } from '../../services/agent-memory/src/models/hashing-embedder.js';
import { HybridEmbedder } from '../../services/agent-memory/src/models/hybrid-embedder.js';
import { bundledWordVectors } from '../../services/agent-memory/src/models/word-vector-file.js';
import { defaultWordVectorCache, loadWordVectors, WORD_VECTOR_ROWS } from '../../services/agent-memory/src/models/word-vectors.js';
import { documentText } from './documents.js';
import { recordFigure } from './figures.js';

const DOCUMENT_CHUNKS = 300;
const ROUNDS = 5;
const LOAD_CHILD = 'BENCH_EMBEDDER_LOAD';

interface LoadFigures {
  from: 'cache' | 'file';
  ms: number;
  rssMiB: number;
}

/** In a child process: one load, the way asked, and what it cost. */
async function loadOnce(cached: boolean): Promise<LoadFigures> {
  globalThis.gc?.();
  const rssBefore = process.memoryUsage().rss;
  const started = performance.now();
  const { from } = await loadWordVectors({ ...bundledWordVectors(), rows: WORD_VECTOR_ROWS, cacheDirectory: cached ? defaultWordVectorCache() : undefined });
  const ms = performance.now() - started;
  globalThis.gc?.();
  return { from, ms, rssMiB: (process.memoryUsage().rss - rssBefore) / 2 ** 20 };
}

async function loadInChild(way: 'cache' | 'file'): Promise<LoadFigures> {
  const script = fileURLToPath(import.meta.url);
  const { stdout } = await promisify(execFile)(process.execPath, ['--expose-gc', '--conditions=agent-platform-source', '--import', 'tsx', script], {
    env: { ...process.env, [LOAD_CHILD]: way },
  });
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as LoadFigures;
}

/** Texts a second over `chunks`, the best of ROUNDS (the first also warms the JIT). */
async function throughput(embedder: Embedder, chunks: readonly string[]): Promise<number> {
  await embedder.embed(['warm-up']);
  let best = 0;
  for (let round = 0; round < ROUNDS; round += 1) {
    const started = performance.now();
    await embedder.embed(chunks);
    best = Math.max(best, chunks.length / ((performance.now() - started) / 1000));
  }
  return best;
}

export async function benchEmbedder(): Promise<void> {
  const file = await loadInChild('file');
  let cache = await loadInChild('cache');
  // No cache yet (a fresh checkout): that load wrote it, the next one reads it.
  if (cache.from === 'file') cache = await loadInChild('cache');
  console.log(`word vectors (${WORD_VECTOR_ROWS.toLocaleString('en')} rows), a fresh process each: from the package's JSON ${Math.round(file.ms)} ms (+${file.rssMiB.toFixed(0)} MiB RSS), from the cache (${cache.from}) ${Math.round(cache.ms)} ms (+${cache.rssMiB.toFixed(0)} MiB RSS)`);
  recordFigure('offline embedder: word vectors loaded from the cache', { value: cache.ms, unit: 'ms', better: 'lower' });
  recordFigure('offline embedder: RSS the word vectors add', { value: cache.rssMiB, unit: 'MiB', better: 'lower' });

  // One paragraph, so every chunk is full (~1,000 characters), as the figure's name says.
  const chunks = chunkText(documentText(7).replaceAll('\n\n', ' ')).slice(0, DOCUMENT_CHUNKS);
  const meanLength = chunks.reduce((sum, chunk) => sum + chunk.length, 0) / chunks.length;
  for (const embedder of [new HybridEmbedder(), new HashingEmbedder()]) {
    const perSecond = await throughput(embedder, chunks);
    const documentMs = (DOCUMENT_CHUNKS / perSecond) * 1000;
    console.log(`${embedder.model}: ${Math.round(perSecond)} texts/s on chunks of ~${Math.round(meanLength)} characters; a ${DOCUMENT_CHUNKS}-chunk document in ${Math.round(documentMs)} ms`);
    if (embedder instanceof HybridEmbedder) {
      recordFigure('offline embedder throughput, ~1,000-character chunks', { value: perSecond, unit: 'texts/s', better: 'higher' });
      // Issue 43: a 100-page PDF (~300 chunks) embedded within a few seconds.
      recordFigure(`offline embedder: a ${DOCUMENT_CHUNKS}-chunk document`, { value: documentMs, unit: 'ms', better: 'lower', target: 3_000 });
    }
  }
}

const way = process.env[LOAD_CHILD];
if (way === 'cache' || way === 'file') {
  process.stdout.write(`${JSON.stringify(await loadOnce(way === 'cache'))}\n`);
} else if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await benchEmbedder();
}
