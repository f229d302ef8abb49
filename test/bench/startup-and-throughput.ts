/**
 * Measures the local all-in-one platform as a developer meets it:
 *  - time from `pnpm start` to the first 200 (cold: fresh data directory; warm: restart on it),
 *  - how soon a second copy on the running one's port is refused (issue 41: within a second),
 *  - resident memory of the platform process and of its embedded PostgreSQL,
 *  - req/s and latency of authenticated GET /api/v1/auth/me and GET /api/v1/agents/{id} at 50
 *    connections, next to a bare Fastify route in a process of its own, each loaded twice,
 *    alternating, from a load generator in a third process: the ratio is what to compare; /auth/me
 *    also beside the one-process peer (peer-server.ts) on the same PostgreSQL server (the
 *    distributed mode's figures are mesh.ts's),
 *  - the all-in-one process's garbage-collection pauses over the /auth/me rounds, from its own
 *    `/metrics` (the runtime instrumentation's `v8js_gc_duration`): the pause every request in
 *    flight waits out, which is what its p99 is made of.
 * Run: pnpm bench   (about a minute; prints figures, asserts nothing)
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, LOCAL_ENTRY, LOCAL_START_FLAGS, startProcess } from '../e2e/harness/processes.js';
import { compareWithBare, cpuPerRequest, PACED_RATE, startBareServer, startPeerServer } from './load.js';
import { dataOf, describePauses, gcPauses, signIn, startPlatform, UNLIMITED } from './platform.js';
import { recordFigure } from './figures.js';
import { describeMemory, memoryByRole } from './process-memory.js';

/** From `pnpm start`'s command to the exit of a copy whose PORT is taken (it prints why and exits 1). */
async function msToRefuseTakenPort(port: number, dataDir: string): Promise<number> {
  const started = performance.now();
  const copy = startProcess(process.execPath, [...LOCAL_START_FLAGS, ...LOCAL_ENTRY], { PORT: String(port), DATA_DIR: dataDir });
  const code = await new Promise<number | null>((resolve) => copy.child.once('exit', resolve));
  if (code !== 1) throw new Error(`a copy on the taken port ${port} exited ${code}, not 1:\n${copy.output()}`);
  return performance.now() - started;
}

async function main(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'agent-platform-bench-'));
  const port = await freePort();
  const pgPort = await freePort();
  try {
    // Counting stays on (the real path); the ceiling is out of the way.
    // One PostgreSQL port for both starts: the warm one reopens the cluster the cold one made.
    const env = { ...UNLIMITED, EMBEDDED_PG_PORT: String(pgPort) };
    const cold = await startPlatform({ dataDir, port, env });
    console.log(`start → first 200, cold (new data directory): ${Math.round(cold.msToFirst200)} ms`);
    await cold.stop();

    const warm = await startPlatform({ dataDir, port, env });
    console.log(`start → first 200, warm (existing data):      ${Math.round(warm.msToFirst200)} ms`);
    const idle = memoryByRole(warm.child.pid!);
    console.log(`memory at idle: ${describeMemory(idle)}`);
    recordFigure('start → first 200, warm', { value: warm.msToFirst200, unit: 'ms', better: 'lower' });
    recordFigure('platform RSS at idle', { value: (idle.get('platform')?.rss ?? 0) / 1024, unit: 'MiB', better: 'lower' });
    // The second of three: the first also compiles for tsx's cache, as a developer's first try did before.
    const refusals = [];
    for (let attempt = 0; attempt < 3; attempt += 1) refusals.push(await msToRefuseTakenPort(port, `${dataDir}-second-copy`));
    console.log(`a second copy on the taken port, refused in: ${refusals.map((ms) => `${Math.round(ms)} ms`).join(', ')}`);
    recordFigure('a second copy on a taken port, refused', { value: refusals[1]!, unit: 'ms', better: 'lower', target: 1_000 });

    const bare = await startBareServer();
    try {
      // The peer's tables in the all-in-one's own PostgreSQL server, as the peer would have one.
      const embeddedPostgres = `postgres://postgres:${encodeURIComponent((await readFile(join(dataDir, 'postgres-password'), 'utf8')).trim())}@127.0.0.1:${pgPort}/postgres`;
      await compareReads(warm.baseUrl, bare.url, 'all-in-one', embeddedPostgres, warm.child.pid);
      console.log(`memory after load: ${describeMemory(memoryByRole(warm.child.pid!))}`);
      await warm.stop();
    } finally {
      await bare.process.stop();
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}

/**
 * Authenticated reads of one platform against the bare route, /auth/me also against the peer on
 * the PostgreSQL server of `postgresUrl`; `mode` names the figures. The targets are issue 24's.
 */
async function compareReads(baseUrl: string, bareUrl: string, mode: string, postgresUrl: string, platformPid?: number): Promise<void> {
  const { client, accessToken } = await signIn(baseUrl);
  const authorization = { authorization: `Bearer ${accessToken}` };
  const { id: agentId } = dataOf(await client.POST('/api/v1/agents', { body: { name: 'Bench', type: 'assistant' } }), 'creating an agent');
  const peer = await startPeerServer(postgresUrl);
  try {
    const pausesBefore = platformPid === undefined ? undefined : await gcPauses(baseUrl);
    await compareWithBare(`${mode}: authenticated GET /api/v1/auth/me`, { url: `${baseUrl}/api/v1/auth/me`, headers: authorization }, bareUrl, {
      peer: peer.route,
      ...(mode === 'all-in-one' ? { targets: { shareOfPeer: 0.6, p99Ms: 20 } } : {}),
    });
    // What the tail waits out: every request in flight sits through a collection's pause.
    if (pausesBefore) {
      const pauses = describePauses(pausesBefore, await gcPauses(baseUrl));
      console.log(`${mode}: the platform's garbage collection over those rounds: ${pauses.line}`);
      recordFigure(`${mode}: young-generation pause under authenticated GET /api/v1/auth/me, mean`, { value: pauses.minorMeanMs, unit: 'ms', better: 'lower' });
    }
    // Where the platform is one process, its CPU per request beside the peer's tells the cost apart from the noise.
    if (platformPid !== undefined) {
      const platformCpu = await cpuPerRequest(platformPid, { url: `${baseUrl}/api/v1/auth/me`, headers: authorization });
      const peerCpu = await cpuPerRequest(peer.process.child.pid!, peer.route);
      const platformUs = platformCpu.get('platform') ?? 0;
      const peerUs = peerCpu.get('other') ?? 0;
      console.log(
        `${mode}: CPU per authenticated GET /api/v1/auth/me at ${PACED_RATE} req/s: platform process ${platformUs.toFixed(0)} µs (its PostgreSQL ${(platformCpu.get('postgres') ?? 0).toFixed(0)} µs), the peer ${peerUs.toFixed(0)} µs; platform ÷ peer ${(platformUs / peerUs).toFixed(2)}`,
      );
      recordFigure(`${mode}: CPU per authenticated GET /api/v1/auth/me, platform process`, { value: platformUs, unit: 'µs', better: 'lower' });
      recordFigure(`${mode}: CPU per authenticated GET /api/v1/auth/me, platform ÷ peer`, { value: platformUs / peerUs, unit: '×', better: 'lower' });
    }
  } finally {
    await peer.process.stop();
  }
  await compareWithBare(`${mode}: authenticated GET /api/v1/agents/{agent_id}`, { url: `${baseUrl}/api/v1/agents/${agentId}`, headers: authorization }, bareUrl);
}

await main();
