/**
 * Measures the local all-in-one platform as a developer meets it:
 *  - time from `pnpm start` to the first 200 (cold: fresh data directory; warm: restart on it),
 *  - resident memory of the platform process and of its embedded PostgreSQL,
 *  - req/s and latency of authenticated GET /api/v1/auth/me and GET /api/v1/agents/{id} at 50
 *    connections, next to a bare Fastify route in a process of its own, each loaded twice,
 *    alternating, from a load generator in a third process: the ratio is what to compare.
 * Run: pnpm bench   (about a minute; prints figures, asserts nothing)
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../e2e/harness/processes.js';
import { compareWithBare, startBareServer } from './load.js';
import { newAccessToken, startPlatform } from './platform.js';
import { describeMemory, memoryByRole } from './process-memory.js';


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
    const authorization = { authorization: `Bearer ${token}` };
    const agent = await fetch(`${warm.baseUrl}/api/v1/agents`, {
      method: 'POST',
      headers: { ...authorization, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Bench', type: 'assistant' }),
    });
    const { id: agentId } = (await agent.json()) as { id: string };

    const bare = await startBareServer();
    await compareWithBare('authenticated GET /api/v1/auth/me', { url: `${warm.baseUrl}/api/v1/auth/me`, headers: authorization }, bare.url);
    await compareWithBare('authenticated GET /api/v1/agents/{agent_id}', { url: `${warm.baseUrl}/api/v1/agents/${agentId}`, headers: authorization }, bare.url);
    await bare.process.stop();
    console.log(`memory after load: ${describeMemory(memoryByRole(warm.child.pid!))}`);
    await warm.stop();
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}

await main();
