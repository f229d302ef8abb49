/**
 * Measures the local all-in-one platform as a developer meets it:
 *  - time from `pnpm start` to the first 200 (cold: fresh data directory; warm: restart on it),
 *  - resident memory of the platform process and of its embedded PostgreSQL,
 *  - req/s and latency of an authenticated GET /api/v1/auth/me at 50 connections, next to a bare
 *    Fastify route in the same run on the same machine, so the ratio is what to compare.
 * Run: pnpm bench   (about a minute; prints figures, asserts nothing)
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import Fastify from 'fastify';
import { freePort } from '../e2e/harness/processes.js';
import { newAccessToken, startPlatform } from './platform.js';
import { describeMemory, memoryByRole } from './process-memory.js';

const CONNECTIONS = 50;
const DURATION_SECONDS = Number(process.env.BENCH_SECONDS ?? 10);

async function load(url: string, headers: Record<string, string> = {}): Promise<autocannon.Result> {
  return autocannon({ url, connections: CONNECTIONS, duration: DURATION_SECONDS, headers });
}

function describeLoad(result: autocannon.Result): string {
  return `${Math.round(result.requests.average)} req/s, p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, non-2xx ${result.non2xx}, errors ${result.errors}`;
}

async function main(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'agent-platform-bench-'));
  const port = await freePort();
  const pgPort = await freePort();
  try {
    // Counting stays on (the real path); the ceiling is out of the way.
    // One PostgreSQL port for both starts: the warm one reopens the cluster the cold one made.
    const env = { RATE_LIMITS: 'free:100000000/100000000,pro:100000000/100000000,enterprise:0/0', EMBEDDED_PG_PORT: String(pgPort) };
    const cold = await startPlatform({ dataDir, port, env });
    console.log(`start → first 200, cold (new data directory): ${Math.round(cold.msToFirst200)} ms`);
    await cold.stop();

    const warm = await startPlatform({ dataDir, port, env });
    console.log(`start → first 200, warm (existing data):      ${Math.round(warm.msToFirst200)} ms`);
    const idle = memoryByRole(warm.child.pid!);
    console.log(`memory at idle: ${describeMemory(idle)}`);

    const token = await newAccessToken(warm.baseUrl);

    const bare = Fastify();
    bare.get('/', () => ({ ok: true }));
    const barePort = await freePort();
    await bare.listen({ port: barePort, host: '127.0.0.1' });

    const bareResult = await load(`http://127.0.0.1:${barePort}/`);
    const meResult = await load(`${warm.baseUrl}/api/v1/auth/me`, { authorization: `Bearer ${token}` });
    const loaded = memoryByRole(warm.child.pid!);
    await bare.close();

    console.log(`bare Fastify GET / (${CONNECTIONS} connections, ${DURATION_SECONDS} s): ${describeLoad(bareResult)}`);
    console.log(`authenticated GET /api/v1/auth/me (same):       ${describeLoad(meResult)}`);
    console.log(`ratio auth/me ÷ bare: ${(meResult.requests.average / bareResult.requests.average).toFixed(3)}`);
    console.log(`memory after load: ${describeMemory(loaded)}`);
    await warm.stop();
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}

await main();
