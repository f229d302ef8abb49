/**
 * The platform as an MCP server (decisions §12.11) against its REST API, on the all-in-one platform
 * (`pnpm start`): the same memory search of the same agent, as REST `POST /api/v1/memory/search`
 * and as an MCP `tools/call` of `search_memory` (`POST /api/v1/mcp`, stateless: a server and a
 * transport per request), each loaded twice, alternating, at 50 connections from a load generator
 * in its own process. Prints both and MCP's throughput as a share of REST's (target ≥ 0.8).
 * Run: node --conditions=agent-platform-source --import tsx test/bench/mcp.ts   (BENCH_QUICK=1 for a short run)
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RequestBody } from '@agent-platform/client';
import { freePort } from '../e2e/harness/processes.js';
import { documentText } from './documents.js';
import { recordFigure } from './figures.js';
import { CONNECTIONS, describeLoad, LOAD_SECONDS, QUICK, runLoad, type LoadOptions, type LoadResult } from './load.js';
import { dataOf, signIn, startPlatform } from './platform.js';

/** Documents of ~1,600 chunks each: the agent's memory holds about this many items times 1,600. */
const DOCUMENTS = Number(process.env.BENCH_MCP_DOCUMENTS ?? (QUICK ? 1 : 4));
const UNLIMITED = { RATE_LIMITS: 'free:0/0,pro:0/0,enterprise:0/0' };
const TARGET = 0.8;

async function main(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'agent-platform-bench-mcp-'));
  const platform = await startPlatform({ dataDir, port: await freePort(), env: { ...UNLIMITED, EMBEDDED_PG_PORT: String(await freePort()) } });
  try {
    const { client, accessToken } = await signIn(platform.baseUrl);
    const agent = dataOf(await client.POST('/api/v1/agents', { body: { name: 'Bench', type: 'assistant', memory_types: ['semantic', 'episodic'] } }), 'creating an agent');
    let stored = 0;
    for (let index = 0; index < DOCUMENTS; index += 1) {
      stored += dataOf(await client.POST('/api/v1/memory/documents', { body: { agent_id: agent.id, content: documentText(index) } }), 'storing a document').chunks;
    }

    const search = { agent_id: agent.id, query: 'where is the refund of ref_0_1200', top_k: 5 } satisfies RequestBody<'/api/v1/memory/search', 'post'>;
    const json = { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' };
    const rest: Omit<LoadOptions, 'connections' | 'seconds'> = { url: `${platform.baseUrl}/api/v1/memory/search`, method: 'POST', headers: json, body: JSON.stringify(search) };
    // What an MCP client sends once initialised; a stateless server needs nothing before it.
    const mcp: Omit<LoadOptions, 'connections' | 'seconds'> = {
      url: `${platform.baseUrl}/api/v1/mcp`,
      method: 'POST',
      headers: { ...json, accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'search_memory', arguments: search } }),
    };

    // Both answer the same results, or the comparison means nothing (a tool error is a fast 200).
    const restAnswer = (await (await fetch(rest.url, { method: 'POST', headers: rest.headers, body: rest.body })).json()) as { results: unknown[] };
    const mcpAnswer = (await (await fetch(mcp.url, { method: 'POST', headers: mcp.headers, body: mcp.body })).json()) as { result?: { isError?: boolean; structuredContent?: unknown } };
    if (mcpAnswer.result?.isError || JSON.stringify(mcpAnswer.result?.structuredContent) !== JSON.stringify(restAnswer)) {
      throw new Error(`MCP and REST answer differently: ${JSON.stringify(mcpAnswer)} vs ${JSON.stringify(restAnswer)}`);
    }

    const shape = { connections: CONNECTIONS, seconds: LOAD_SECONDS };
    // A warm-up of each first (JIT, caches), then REST, MCP, REST, MCP: a machine that speeds up
    // or slows down during the run skews neither side.
    await runLoad({ ...rest, ...shape, seconds: Math.min(3, LOAD_SECONDS) });
    await runLoad({ ...mcp, ...shape, seconds: Math.min(3, LOAD_SECONDS) });
    const runs: { rest: LoadResult; mcp: LoadResult }[] = [];
    for (let round = 0; round < 2; round += 1) runs.push({ rest: await runLoad({ ...rest, ...shape }), mcp: await runLoad({ ...mcp, ...shape }) });

    const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
    const restRate = mean(runs.map((run) => run.rest.requestsPerSecond));
    const mcpRate = mean(runs.map((run) => run.mcp.requestsPerSecond));
    const ratio = mcpRate / restRate;
    console.log(`MCP search_memory vs REST POST /api/v1/memory/search over ${stored} items (${CONNECTIONS} connections, ${LOAD_SECONDS} s each, load generator in its own process):`);
    runs.forEach((run, index) => {
      console.log(`  round ${index + 1}: REST ${describeLoad(run.rest)}`);
      console.log(`  round ${index + 1}: MCP  ${describeLoad(run.mcp)}`);
    });
    console.log(`  mean: REST ${Math.round(restRate)} req/s, MCP ${Math.round(mcpRate)} req/s; ratio MCP ÷ REST ${ratio.toFixed(3)} (target ≥ ${TARGET}${ratio >= TARGET ? ', met' : ', NOT met'})`);
    recordFigure('MCP search_memory: share of REST search throughput', { value: ratio, unit: '', better: 'higher' });
    recordFigure('MCP search_memory: p99', { value: Math.max(...runs.map((run) => run.mcp.p99)), unit: 'ms', better: 'lower' });
  } finally {
    await platform.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

await main();
