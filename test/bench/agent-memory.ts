/**
 * agent-memory through the whole local platform, as a developer meets it (`pnpm start`):
 *  - POST /memory/search at 50 connections, next to a bare Fastify route in a process of its own,
 *    each loaded twice, alternating, from a load generator in a third process: the ratio is what
 *    to compare, with the garbage-collection pauses of the platform's main thread over those rounds;
 *  - the overhead of a chat turn with the offline model (everything but a real model): p50, p95;
 *  - restart time with BENCH_MEMORY_ITEMS items stored (default 100,000; documents of ~1,600
 *    chunks each, on varied subjects: documents.ts), and the platform's RSS after it (measured
 *    first, so the load runs on an index loaded from its files, not one still building).
 * Run: node --conditions=agent-platform-source --import tsx test/bench/agent-memory.ts   (BENCH_MEMORY_ITEMS=10000 for a quick run)
 * BENCH_MEMORY_DATA_DIR keeps the platform's data there: the next run (of this checkout or
 * another) stores nothing and searches the same memory. Runs that each store their own differed by
 * ±20 % in searches a second on one machine, more than the changes they were meant to judge.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_EXACT_SEARCH_MAX_VECTORS } from '@agent-platform/agent-memory';
import type { RequestBody } from '@agent-platform/client';
import { freePort, waitForOutput } from '../e2e/harness/processes.js';
import { compareWithBare, CONNECTIONS, describeLoad, LOAD_SECONDS, QUICK, runLoad, startBareServer } from './load.js';
import { documentText } from './documents.js';
import { recordFigure } from './figures.js';
import { dataOf, describePauses, gcPauses, signIn, startPlatform, UNLIMITED } from './platform.js';
import { describeMemory, memoryByRole } from './process-memory.js';

const STORED_ITEMS = Number(process.env.BENCH_MEMORY_ITEMS ?? (QUICK ? 5_000 : 100_000));
const CHAT_TURNS = 200;

function percentile(sorted: readonly number[], fraction: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))] ?? Number.NaN;
}

/** Whether the platform logged that an agent's HNSW graph holds `vectors` vectors. */
function graphCompleteWith(output: string, vectors: number): boolean {
  return output.split('\n').some((line) => line.includes('"vector index: HNSW graph complete"') && line.includes(`"vectors":${vectors},`));
}

const KEPT_DATA_DIR = process.env.BENCH_MEMORY_DATA_DIR;

async function main(): Promise<void> {
  if (KEPT_DATA_DIR !== undefined) await mkdir(KEPT_DATA_DIR, { recursive: true });
  const dataDir = KEPT_DATA_DIR ?? (await mkdtemp(join(tmpdir(), 'agent-platform-bench-memory-')));
  const port = await freePort();
  const env = { ...UNLIMITED, EMBEDDED_PG_PORT: String(await freePort()) };
  try {
    // At info while storing, for the index's "graph complete" line (the load runs at warn).
    let platform = await startPlatform({ dataDir, port, env: { ...env, LOG_LEVEL: 'info' } });
    const { client, accessToken: token } = await signIn(platform.baseUrl, KEPT_DATA_DIR === undefined ? undefined : 'bench-memory@example.com');
    const kept = dataOf(await client.GET('/api/v1/agents'), 'listing agents').agents[0];
    const agent = kept ?? dataOf(await client.POST('/api/v1/agents', { body: { name: 'Bench', type: 'assistant', memory_types: ['semantic', 'episodic'] } }), 'creating an agent');

    let stored = kept ? dataOf(await client.GET('/api/v1/memory', { params: { query: { agent_id: agent.id, per_page: 1 } } }), 'counting items').total : 0;
    const documentMs: number[] = [];
    for (let index = 0; stored < STORED_ITEMS; index += 1) {
      const started = performance.now();
      const document = dataOf(await client.POST('/api/v1/memory/documents', { body: { agent_id: agent.id, content: documentText(index) } }), 'storing a document');
      documentMs.push(performance.now() - started);
      stored += document.chunks;
    }
    documentMs.sort((a, b) => a - b);
    const total = documentMs.reduce((sum, ms) => sum + ms, 0);
    if (documentMs.length > 0) {
      console.log(`stored ${stored} memory items in ${(total / 1000).toFixed(1)} s: ${documentMs.length} documents of ~1 MB, p50 ${Math.round(percentile(documentMs, 0.5))} ms each`);
    }

    // Restarted before the load once the graph holds every item: the index comes back from its
    // files (the HNSW graph included), as a platform that has been running a while serves it.
    // An agent with no more than DEFAULT_EXACT_SEARCH_MAX_VECTORS is searched exactly: no graph to
    // wait for; nor is there when nothing was stored (the kept graph was saved whole at its stop).
    if (documentMs.length === 0) {
      console.log(`${stored} items kept: the index comes back from its files`);
    } else if (stored > DEFAULT_EXACT_SEARCH_MAX_VECTORS) {
      const buildStarted = performance.now();
      await waitForOutput('the HNSW graph of every stored item', platform, (output) => graphCompleteWith(output, stored), 30 * 60_000);
      console.log(`HNSW graph of ${stored} items complete ${((performance.now() - buildStarted) / 1000).toFixed(1)} s after the last document was stored`);
    } else {
      console.log(`${stored} items are no more than ${DEFAULT_EXACT_SEARCH_MAX_VECTORS}: searched exactly, no HNSW graph is built`);
    }
    await platform.stop();
    platform = await startPlatform({ dataDir, port, env });
    console.log(`restart → first 200 with ${stored} items stored: ${Math.round(platform.msToFirst200)} ms; memory: ${describeMemory(memoryByRole(platform.child.pid!))}`);

    const bare = await startBareServer();
    const search = JSON.stringify({ agent_id: agent.id, query: 'where is the refund of ref_3_1200', top_k: 5 } satisfies RequestBody<'/api/v1/memory/search', 'post'>);
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const route = { url: `${platform.baseUrl}/api/v1/memory/search`, method: 'POST' as const, body: search, headers };
    // A warm-up round first: JIT, caches, and an index graph that a restart may still be completing.
    console.log(`POST /api/v1/memory/search, warm-up: ${describeLoad(await runLoad({ ...route, connections: CONNECTIONS, seconds: LOAD_SECONDS }))}`);
    // Issue 24's goal for search at scale: 500 req/s at 50 connections, p99 150 ms, over 100k items.
    const targets = stored >= 100_000 ? { requestsPerSecond: 500, p99Ms: 150 } : {};
    const pausesBefore = await gcPauses(platform.baseUrl);
    await compareWithBare(`POST /api/v1/memory/search over ${stored} items`, route, bare.url, { targets });
    console.log(`the platform's garbage collection over those rounds: ${describePauses(pausesBefore, await gcPauses(platform.baseUrl)).line}`);
    await bare.process.stop();

    const latencies: number[] = [];
    let sessionId: string | undefined;
    for (let turn = 0; turn < CHAT_TURNS; turn += 1) {
      const started = performance.now();
      const message = `Question ${turn}: what do you know about ref_${turn}_${turn * 3}?`;
      const chat = await client.POST('/api/v1/agents/{agent_id}/chat', { params: { path: { agent_id: agent.id } }, body: { message, ...(sessionId ? { session_id: sessionId } : {}) } });
      const reply = dataOf(chat, 'a chat turn');
      latencies.push(performance.now() - started);
      // A new session every 20 turns, so history stays as long as real sessions are.
      sessionId = turn % 20 === 19 ? undefined : reply.session_id;
    }
    latencies.sort((a, b) => a - b);
    console.log(`chat turn with the offline model (${CHAT_TURNS} turns, one at a time): p50 ${percentile(latencies, 0.5).toFixed(1)} ms, p95 ${percentile(latencies, 0.95).toFixed(1)} ms`);
    recordFigure('chat turn, offline model, p50', { value: percentile(latencies, 0.5), unit: 'ms', better: 'lower' });

    await platform.stop();
  } finally {
    if (KEPT_DATA_DIR === undefined) await rm(dataDir, { recursive: true, force: true });
  }
}

await main();
