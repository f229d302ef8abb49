/**
 * Two platforms' memory search over memories agent-memory.ts kept (BENCH_MEMORY_DATA_DIR), side by
 * side: this checkout on one data directory, another checkout (`pnpm start` there) on another.
 * For what a change costs search at scale where the data must differ, as for two embedders: each
 * data directory stored by its own side, so neither re-embeds the other's items while measured.
 *  - paced rounds, both loaded at once at AB_KEPT_RATE searches a second each (default 120: the two
 *    together below what 2 cores complete): each side's CPU per search, platform and PostgreSQL,
 *    measured at the same moments, so a machine whose speed comes and goes skews neither side;
 *  - then saturation at 50 connections, 10 s rounds, alternating A B B A, twice: req/s and p99,
 *    which issue 24's targets are about (≥ 500 req/s, p99 ≤ 150 ms over 100k items).
 * Run: node --conditions=agent-platform-source --import tsx test/bench/ab-kept.ts <data dir> <other checkout> <its data dir>
 */
import type { RequestBody } from '@agent-platform/client';
import { freePort, REPO_ROOT, startLocalPlatformProcess } from '../e2e/harness/processes.js';
import { describeLoad, runLoad, warmUp, type RouteLoad } from './load.js';
import { dataOf, signIn, UNLIMITED } from './platform.js';
import { cpuSample, cpuSince } from './process-memory.js';

const RATE = Number(process.env.AB_KEPT_RATE ?? 120);
const PACED_ROUNDS = Number(process.env.AB_KEPT_ROUNDS ?? 10);
const PACED_SECONDS = 5;
const SATURATION_SECONDS = 10;
/** agent-memory.ts's user and query, so its kept agent is the one searched. */
const USER = 'bench-memory@example.com';
const QUERY = 'where is the refund of ref_3_1200';

const [dataDir, otherRoot, otherDataDir] = process.argv.slice(2);
if (!dataDir || !otherRoot || !otherDataDir) throw new Error('usage: ab-kept.ts <data dir> <other checkout> <its data dir>');

interface Side {
  name: string;
  pid: number;
  route: RouteLoad;
  stop: () => Promise<unknown>;
}

async function start(name: string, root: string, directory: string): Promise<Side> {
  const platform = await startLocalPlatformProcess({ dataDir: directory, port: await freePort(), env: { LOG_LEVEL: 'warn', ...UNLIMITED }, via: 'pnpm', root });
  const { client, accessToken } = await signIn(platform.baseUrl, USER);
  const agent = dataOf(await client.GET('/api/v1/agents'), 'listing agents').agents[0];
  if (!agent) throw new Error(`${directory}: no agent kept; store one with agent-memory.ts first`);
  const body = JSON.stringify({ agent_id: agent.id, query: QUERY, top_k: 5 } satisfies RequestBody<'/api/v1/memory/search', 'post'>);
  const headers = { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' };
  return { name, pid: platform.child.pid!, route: { url: `${platform.baseUrl}/api/v1/memory/search`, method: 'POST', body, headers }, stop: () => platform.stop() };
}

const sides: Side[] = [];
try {
  sides.push(await start('this checkout', REPO_ROOT, dataDir), await start(otherRoot, otherRoot, otherDataDir));
  for (const side of sides) await warmUp(side.route);
  const totals = new Map(sides.map((side) => [side, { cpuMs: 0, requests: 0 }]));
  for (let round = 1; round <= PACED_ROUNDS; round += 1) {
    const lines = await Promise.all(
      sides.map(async (side) => {
        const before = cpuSample(side.pid);
        const result = await runLoad({ ...side.route, connections: 50, seconds: PACED_SECONDS, overallRate: RATE });
        const cpu = cpuSince(before, side.pid);
        const total = totals.get(side)!;
        total.cpuMs += cpu.get('platform') ?? 0;
        total.requests += result.total;
        const perSearch = (role: string) => ((1000 * (cpu.get(role) ?? 0)) / result.total).toFixed(0);
        return `${side.name}: platform ${perSearch('platform')} µs + PostgreSQL ${perSearch('postgres')} µs (p99 ${result.p99} ms)`;
      }),
    );
    console.log(`paced round ${round}, CPU per search: ${lines.join('; ')}`);
  }
  const [a, b] = sides as [Side, Side];
  const mean = (side: Side) => (1000 * totals.get(side)!.cpuMs) / totals.get(side)!.requests;
  console.log(`platform CPU per search at ${RATE}/s each: this checkout ${mean(a).toFixed(0)} µs, the other ${mean(b).toFixed(0)} µs; ratio ${(mean(a) / mean(b)).toFixed(3)}`);
  const rates = new Map(sides.map((side) => [side, [] as number[]]));
  for (const side of [a, b, b, a, a, b, b, a]) {
    const result = await runLoad({ ...side.route, connections: 50, seconds: SATURATION_SECONDS });
    rates.get(side)!.push(result.requestsPerSecond);
    console.log(`saturation, ${side.name}: ${describeLoad(result)}`);
  }
  const meanRate = (side: Side) => rates.get(side)!.reduce((sum, rate) => sum + rate, 0) / rates.get(side)!.length;
  console.log(`searches a second at 50 connections: this checkout ${meanRate(a).toFixed(0)}, the other ${meanRate(b).toFixed(0)}; ratio ${(meanRate(a) / meanRate(b)).toFixed(3)}`);
} finally {
  for (const side of sides) await side.stop();
}
