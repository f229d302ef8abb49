/**
 * Measures the local all-in-one platform as a developer meets it:
 *  - time from `pnpm start` to the first 200 (cold: fresh data directory; warm: restart on it),
 *  - resident memory of the platform process and of its embedded PostgreSQL,
 *  - req/s and latency of an authenticated GET /api/v1/auth/me at 50 connections, next to a bare
 *    Fastify route in the same run on the same machine, so the ratio is what to compare.
 * Run: pnpm bench   (about a minute; prints figures, asserts nothing)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import Fastify from 'fastify';
import { REPO_ROOT, freePort } from '../e2e/harness/processes.js';

const CONNECTIONS = 50;
const DURATION_SECONDS = Number(process.env.BENCH_SECONDS ?? 10);

interface Started {
  child: ChildProcess;
  msToFirst200: number;
  baseUrl: string;
}

async function startPlatform(dataDir: string, port: number, pgPort: number): Promise<Started> {
  const started = performance.now();
  const child = spawn('pnpm', ['start'], {
    cwd: REPO_ROOT,
    detached: true,
    stdio: 'ignore',
    env: {
      ...process.env,
      DATA_DIR: dataDir,
      PORT: String(port),
      EMBEDDED_PG_PORT: String(pgPort),
      IDENTITY_GRPC_PORT: '0',
      LOG_LEVEL: 'warn',
      // Counting stays on (the real path), the ceiling is out of the way.
      RATE_LIMITS: 'free:100000000/100000000,pro:100000000/100000000,enterprise:0/0',
    },
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`pnpm start exited with ${child.exitCode}`);
    const ok = await fetch(`${baseUrl}/readyz`).then((r) => r.status === 200, () => false);
    if (ok) break;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return { child, msToFirst200: performance.now() - started, baseUrl };
}

async function stopPlatform(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  process.kill(-child.pid!, 'SIGINT');
  await exited;
  // pnpm exits with its child; give PostgreSQL a moment to finish its own shutdown.
  await new Promise((resolve) => setTimeout(resolve, 500));
}

interface Memory {
  /** KiB resident. */
  rss: number;
  /** KiB proportional set: shared pages split among the processes sharing them. */
  pss: number;
}

/** Memory of every process in `rootPid`'s tree, summed by role (platform, postgres, other). */
function memoryByRole(rootPid: number): Map<string, Memory> {
  const parents = new Map<number, number>();
  const roles = new Map<number, string>();
  const memory = new Map<number, Memory>();
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    try {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      parents.set(pid, Number(/PPid:\s+(\d+)/.exec(status)?.[1]));
      // Node names its main thread `MainThread`, so processes are told apart by their command line.
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      roles.set(pid, cmdline.includes('main.ts') ? 'platform' : cmdline.includes('postgres') ? 'postgres' : 'other');
      const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
      memory.set(pid, { rss: Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0), pss: Number(/^Pss:\s+(\d+)/m.exec(rollup)?.[1] ?? 0) });
    } catch {
      // The process ended while we looked.
    }
  }
  const inTree = (pid: number): boolean => pid === rootPid || (parents.has(pid) && pid > 1 && inTree(parents.get(pid)!));
  const totals = new Map<string, Memory>();
  for (const [pid, usage] of memory) {
    if (!inTree(pid)) continue;
    const role = roles.get(pid)!;
    const total = totals.get(role) ?? { rss: 0, pss: 0 };
    totals.set(role, { rss: total.rss + usage.rss, pss: total.pss + usage.pss });
  }
  return totals;
}

function describeMemory(totals: Map<string, Memory>): string {
  const mib = (kib: number | undefined) => Math.round((kib ?? 0) / 1024);
  return `platform process RSS ${mib(totals.get('platform')?.rss)} MiB; embedded PostgreSQL PSS ${mib(totals.get('postgres')?.pss)} MiB (all its processes)`;
}

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
    const cold = await startPlatform(dataDir, port, pgPort);
    console.log(`start → first 200, cold (new data directory): ${Math.round(cold.msToFirst200)} ms`);
    await stopPlatform(cold.child);

    const warm = await startPlatform(dataDir, port, pgPort);
    console.log(`start → first 200, warm (existing data):      ${Math.round(warm.msToFirst200)} ms`);
    const idle = memoryByRole(warm.child.pid!);
    console.log(`memory at idle: ${describeMemory(idle)}`);

    const email = `bench-${Date.now()}@example.com`;
    const password = 'bench password 123';
    await fetch(`${warm.baseUrl}/api/v1/auth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password }) });
    const login = (await (
      await fetch(`${warm.baseUrl}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ username: email, password }) })
    ).json()) as { access_token: string };

    const bare = Fastify();
    bare.get('/', () => ({ ok: true }));
    const barePort = await freePort();
    await bare.listen({ port: barePort, host: '127.0.0.1' });

    const bareResult = await load(`http://127.0.0.1:${barePort}/`);
    const meResult = await load(`${warm.baseUrl}/api/v1/auth/me`, { authorization: `Bearer ${login.access_token}` });
    const loaded = memoryByRole(warm.child.pid!);
    await bare.close();

    console.log(`bare Fastify GET / (${CONNECTIONS} connections, ${DURATION_SECONDS} s): ${describeLoad(bareResult)}`);
    console.log(`authenticated GET /api/v1/auth/me (same):       ${describeLoad(meResult)}`);
    console.log(`ratio auth/me ÷ bare: ${(meResult.requests.average / bareResult.requests.average).toFixed(3)}`);
    console.log(`memory after load: ${describeMemory(loaded)}`);
    await stopPlatform(warm.child);
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}

await main();
