/**
 * The mesh's own speed (decisions §18): the distributed mode (`startMesh`, each part its own
 * compiled process, gRPC over loopback, this machine's PostgreSQL, NATS and Redis), one replica of
 * each part, as `pnpm start:mesh` runs it:
 *  - authenticated GET /api/v1/auth/me beside the one-process peer (peer-server.ts) and a bare
 *    Fastify route, alternating rounds (`compareWithBare`), at least 0.45 of the peer; its p99 at a
 *    steady 300 req/s beside the peer's, at most 25 ms (the targets; why the p99 is not
 *    judged flat out is said at STEADY_RATE); then the whole machine's CPU per request on each side, by
 *    process (PostgreSQL, Redis and the load generator included), and the price of one gRPC hop
 *    alone (hop-server.ts);
 *  - POST /api/v1/memory/search over one agent's 2,000 items, beside the bare route;
 *  - a chat turn with the offline model, one at a time: p50 and p95;
 *  - a mixed load: reads, searches and memory writes at once, each on its own connections.
 * Run: node --conditions=agent-platform-source --import tsx test/bench/mesh.ts   (pnpm bench runs it)
 */
import type { RequestBody } from '@agent-platform/client';
import { ADMIN_URL, startDistributedPlatform } from '../e2e/harness/setup-distributed.js';
import { recordFigure } from './figures.js';
import { compareWithBare, CONNECTIONS, describeCpuPerRequest, describeLoad, LOAD_SECONDS, machineCpuPerRequest, runLoad, startBareServer, startHop, startPeerServer, warmUp, type RouteLoad } from './load.js';
import { dataOf, signIn, UNLIMITED } from './platform.js';

const ITEMS = 2_000;
/**
 * Latency is judged below capacity, at a rate replicas are provisioned for. Flat out, a p99 is the
 * queue the load generator's connections make (mean latency = connections ÷ rate): 50 connections
 * at the peer's own 3,000–4,000 req/s here wait 12–17 ms on average, so no p99 target holds there.
 * Few connections, since a paced load sends each connection's requests at the same instants.
 */
const STEADY_RATE = 300;
const STEADY_CONNECTIONS = 10;
const CHAT_TURNS = 200;

function percentile(sorted: readonly number[], fraction: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))] ?? Number.NaN;
}

/** Each side loaded flat out in turn: its machine CPU per request, printed by process, recorded as a figure. */
async function machineCpuOf(sides: Record<string, RouteLoad>, figure: string): Promise<Record<string, number>> {
  const totals: Record<string, number> = {};
  for (const [side, route] of Object.entries(sides)) {
    const cpu = await machineCpuPerRequest(route);
    totals[side] = cpu.total;
    console.log(`  ${side.padEnd(5)} ${describeLoad(cpu.result)}; ${describeCpuPerRequest(cpu)}`);
    recordFigure(`mesh: ${figure}, ${side}`, { value: cpu.total, unit: 'µs', better: 'lower' });
  }
  return totals;
}

async function main(): Promise<void> {
  const mesh = await startDistributedPlatform({ env: { RATE_LIMITS: UNLIMITED.RATE_LIMITS, WELCOME_CREDITS: UNLIMITED.WELCOME_CREDITS } });
  const bare = await startBareServer();
  try {
    const { client, accessToken } = await signIn(mesh.baseUrl);
    const headers = { authorization: `Bearer ${accessToken}` };
    const me: RouteLoad = { url: `${mesh.baseUrl}/api/v1/auth/me`, headers };

    const peer = await startPeerServer(ADMIN_URL);
    try {
      await compareWithBare('mesh: authenticated GET /api/v1/auth/me', me, bare.url, { peer: peer.route, targets: { shareOfPeer: 0.45 } });
      console.log(`latency at a steady ${STEADY_RATE} req/s (${STEADY_CONNECTIONS} connections, ${LOAD_SECONDS} s each):`);
      // The bare route's tail is the machine's own: what no server on it answers faster than.
      for (const [side, route] of Object.entries({ bare: { url: bare.url }, peer: peer.route, mesh: me })) {
        const result = await runLoad({ ...route, connections: STEADY_CONNECTIONS, seconds: LOAD_SECONDS, overallRate: STEADY_RATE });
        console.log(`  ${side.padEnd(4)} ${describeLoad(result)}`);
        recordFigure(`mesh: /auth/me p99 at a steady ${STEADY_RATE} req/s, ${side}`, { value: result.p99, unit: 'ms', better: 'lower', ...(side === 'mesh' ? { target: 25 } : {}) });
      }
      // What the gap is made of: the machine's CPU per request on each side, servers included.
      console.log(`where /auth/me's CPU goes on the whole machine, flat out (${CONNECTIONS} connections, ${LOAD_SECONDS} s each):`);
      const totals = await machineCpuOf({ peer: peer.route, mesh: me }, 'machine CPU per /auth/me');
      console.log(`  machine CPU per request, peer ÷ mesh: ${(totals['peer']! / totals['mesh']!).toFixed(3)}`);
    } finally {
      await peer.process.stop();
    }
    // The hop alone: one answer given by a process itself, and fetched over gRPC as the gateway fetches /auth/me.
    const hop = await startHop();
    try {
      console.log(`the price of one hop (test/bench/hop-server.ts: a fixed profile, answered in process and over gRPC), flat out:`);
      await warmUp(hop.local);
      await warmUp(hop.hop);
      const totals = await machineCpuOf({ local: hop.local, hop: hop.hop }, 'machine CPU per request answered');
      console.log(`  one hop adds ${Math.round(totals['hop']! - totals['local']!)} µs of the machine's CPU per request`);
    } finally {
      await hop.stop();
    }

    const agent = dataOf(await client.POST('/api/v1/agents', { body: { name: 'Bench', type: 'assistant', memory_types: ['semantic', 'episodic'] } }), 'creating an agent');
    for (let item = 0; item < ITEMS; item += 1) {
      const content = `Order ord_${item} shipped to depot ${item % 17} on day ${item % 30}: ${item % 3 === 0 ? 'refund asked' : 'delivered'}`;
      dataOf(await client.POST('/api/v1/memory', { body: { agent_id: agent.id, memory_type: 'semantic', content, metadata: {} } }), 'adding an item');
    }
    const searchBody = JSON.stringify({ agent_id: agent.id, query: 'which orders to depot 3 asked for a refund', top_k: 5 } satisfies RequestBody<'/api/v1/memory/search', 'post'>);
    const search: RouteLoad = { url: `${mesh.baseUrl}/api/v1/memory/search`, method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: searchBody };
    await compareWithBare(`mesh: POST /api/v1/memory/search over ${ITEMS} items`, search, bare.url);

    const latencies: number[] = [];
    let sessionId: string | undefined;
    for (let turn = 0; turn < CHAT_TURNS; turn += 1) {
      const started = performance.now();
      const chat = await client.POST('/api/v1/agents/{agent_id}/chat', {
        params: { path: { agent_id: agent.id } },
        body: { message: `Question ${turn}: what happened to ord_${turn * 7}?`, ...(sessionId ? { session_id: sessionId } : {}) },
      });
      const reply = dataOf(chat, 'a chat turn');
      latencies.push(performance.now() - started);
      // A new session every 20 turns, so history stays as long as real sessions are.
      sessionId = turn % 20 === 19 ? undefined : reply.session_id;
    }
    latencies.sort((a, b) => a - b);
    console.log(`mesh: chat turn with the offline model (${CHAT_TURNS} turns, one at a time): p50 ${percentile(latencies, 0.5).toFixed(1)} ms, p95 ${percentile(latencies, 0.95).toFixed(1)} ms`);
    recordFigure('mesh: chat turn, offline model, p50', { value: percentile(latencies, 0.5), unit: 'ms', better: 'lower' });
    recordFigure('mesh: chat turn, offline model, p95', { value: percentile(latencies, 0.95), unit: 'ms', better: 'lower' });

    // Mixed: every kind at once, the connections split between them as a busy tenant's would be.
    const write: RouteLoad = {
      url: `${mesh.baseUrl}/api/v1/memory`,
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ agent_id: agent.id, memory_type: 'episodic', content: 'Customer called about a late parcel', metadata: {} }),
    };
    const agentRead: RouteLoad = { url: `${mesh.baseUrl}/api/v1/agents/${agent.id}`, headers };
    const mix = { 'GET /auth/me': me, 'GET /agents/{id}': agentRead, 'POST /memory/search': search, 'POST /memory': write };
    const share = Math.floor(CONNECTIONS / Object.keys(mix).length);
    const results = await Promise.all(Object.values(mix).map((route) => runLoad({ ...route, connections: share, seconds: LOAD_SECONDS })));
    const total = results.reduce((sum, result) => sum + result.requestsPerSecond, 0);
    console.log(`mesh: mixed load (${share} connections each, ${LOAD_SECONDS} s): ${Math.round(total)} req/s in all`);
    Object.keys(mix).forEach((name, index) => console.log(`  ${name.padEnd(20)} ${describeLoad(results[index]!)}`));
    recordFigure('mesh: mixed load, req/s', { value: total, unit: 'req/s', better: 'higher' });
    recordFigure('mesh: mixed load, worst p99', { value: Math.max(...results.map((result) => result.p99)), unit: 'ms', better: 'lower' });
  } finally {
    await bare.process.stop();
    await mesh.stop();
  }
}

await main();
