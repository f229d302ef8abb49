/**
 * What the tool loop adds to a chat turn, through the whole local platform (`pnpm start`): the
 * same offline-model turn with no tool, and naming one http tool (a second model round, the call
 * through the SSRF-guarded client, the call and its result stored). The tool's server answers at
 * once from this process, so the difference is the platform's own cost. Turns alternate between
 * the two agents, so both see the same machine. Target (issue 20): the tool turn's p50 at most
 * 15 ms above the plain turn's.
 * Run: node --conditions=agent-platform-source --import tsx test/bench/chat-tools.ts
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../e2e/harness/processes.js';
import { recordFigure } from './figures.js';
import { QUICK } from './load.js';
import { dataOf, signIn, startPlatform, UNLIMITED } from './platform.js';

const TURNS = QUICK ? 100 : 400;
const WARM_UP_TURNS = 20;

function percentile(sorted: readonly number[], fraction: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))] ?? Number.NaN;
}

async function main(): Promise<void> {
  const toolServer = createServer((request, response) => {
    request.resume();
    request.on('end', () => response.writeHead(200, { 'content-type': 'application/json' }).end('{"state":"shipped"}'));
  });
  await new Promise<void>((resolve) => toolServer.listen(0, '127.0.0.1', resolve));
  const toolUrl = `http://127.0.0.1:${(toolServer.address() as AddressInfo).port}/track`;
  const dataDir = await mkdtemp(join(tmpdir(), 'agent-platform-bench-tools-'));
  // The tool's server is on loopback: the development allowance lets the platform reach it.
  const env = { ...UNLIMITED, ALLOW_PRIVATE_NETWORK_URLS: 'true', EMBEDDED_PG_PORT: String(await freePort()) };
  const platform = await startPlatform({ dataDir, port: await freePort(), env });
  try {
    const { client } = await signIn(platform.baseUrl);
    const tool = dataOf(
      await client.POST('/api/v1/tools', { body: { name: 'track_order', type: 'http', config: { url: toolUrl }, input_schema: { type: 'object' } } }),
      'creating a tool',
    );
    const plain = dataOf(await client.POST('/api/v1/agents', { body: { name: 'Plain', type: 'assistant', memory_types: ['episodic'] } }), 'creating an agent');
    const acting = dataOf(await client.POST('/api/v1/agents', { body: { name: 'Acting', type: 'assistant', memory_types: ['episodic'], tools: [tool.id] } }), 'creating an agent');

    const timings = { plain: [] as number[], tool: [] as number[] };
    for (let turn = 0; turn < WARM_UP_TURNS + TURNS; turn += 1) {
      for (const [kind, agent, message] of [
        ['plain', plain, `Where is order ${turn}?`],
        ['tool', acting, `track_order {"order_id": "${turn}"}`],
      ] as const) {
        const started = performance.now();
        const reply = dataOf(await client.POST('/api/v1/agents/{agent_id}/chat', { params: { path: { agent_id: agent.id } }, body: { message } }), 'a chat turn');
        if (turn >= WARM_UP_TURNS) timings[kind].push(performance.now() - started);
        if (kind === 'tool' && reply.tool_calls[0]?.status !== 'completed') throw new Error(`the tool call did not complete: ${JSON.stringify(reply.tool_calls)}`);
      }
    }
    const plainP50 = percentile(timings.plain.sort((a, b) => a - b), 0.5);
    const toolP50 = percentile(timings.tool.sort((a, b) => a - b), 0.5);
    console.log(
      `chat turn, offline model (${TURNS} of each, alternating): no tool p50 ${plainP50.toFixed(1)} ms, p95 ${percentile(timings.plain, 0.95).toFixed(1)} ms; ` +
        `one http tool p50 ${toolP50.toFixed(1)} ms, p95 ${percentile(timings.tool, 0.95).toFixed(1)} ms; the tool loop adds ${(toolP50 - plainP50).toFixed(1)} ms at p50 (target ≤ 15)`,
    );
    recordFigure('chat turn with one http tool, overhead over a plain turn, p50', { value: toolP50 - plainP50, unit: 'ms', better: 'lower' });
  } finally {
    await platform.stop();
    toolServer.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

await main();
