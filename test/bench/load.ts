import { availableParallelism } from 'node:os';
import { REPLICA_NODE_ARGUMENTS } from '@agent-platform/local/mesh';
import { startProcess, waitForOutput, type RunningProcess } from '../e2e/harness/processes.js';
import { recordFigure } from './figures.js';
import { cpuSample, cpuSince, machineCpuSample, machineCpuSince } from './process-memory.js';

export interface LoadOptions {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  connections: number;
  seconds: number;
  /** Requests per second across all connections; unset, as many as the server answers. */
  overallRate?: number;
}

export interface LoadResult {
  requestsPerSecond: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  total: number;
  /** CPU time the load generator itself used (user + system, milliseconds), start-up included. */
  cpuMs: number;
}

/** `pnpm bench --quick` (or BENCH_SECONDS) shortens every timed run; figures are then indicative only. */
export const QUICK = process.env.BENCH_QUICK === '1';
export const LOAD_SECONDS = Number(process.env.BENCH_SECONDS ?? (QUICK ? 3 : 10));
export const CONNECTIONS = 50;
/** One unmeasured run of a warm-up; `warmUp` runs them until the rate stops rising. */
const WARM_UP_SECONDS = QUICK ? 1 : 3;
/** Bounds a warm-up that never settles (a machine whose speed keeps changing). */
const WARM_UP_RUNS_MAX = QUICK ? 2 : 10;

/** Runs autocannon in a child process (test/bench/load-child.ts) and answers its figures. */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const child = startProcess(process.execPath, ['--import', 'tsx', 'test/bench/load-child.ts', JSON.stringify(options)], {});
  const code = await new Promise<number | null>((resolve) => child.child.once('exit', resolve));
  const line = child.output().trim().split('\n').at(-1) ?? '';
  if (code !== 0) throw new Error(`the load generator failed (${code}):\n${child.output()}`);
  return JSON.parse(line) as LoadResult;
}

export function describeLoad(result: LoadResult): string {
  return `${Math.round(result.requestsPerSecond)} req/s, p50 ${result.p50} ms, p99 ${result.p99} ms, non-2xx ${result.non2xx}, errors ${result.errors}`;
}

/** A bare Fastify route (GET and POST /) in a process of its own: the ceiling routes are compared with. */
export async function startBareServer(): Promise<{ url: string; process: RunningProcess }> {
  const bare = startProcess(process.execPath, ['--import', 'tsx', 'test/bench/bare-server.ts'], {});
  const port = Number((await listeningLine('the bare Fastify server', bare))[1]);
  return { url: `http://127.0.0.1:${port}/`, process: bare };
}

/**
 * The one-process peer (test/bench/peer-server.ts) on the PostgreSQL server of `postgresUrl`, in a
 * process of its own: its GET /api/v1/auth/me and the bearer token it answers.
 */
export async function startPeerServer(postgresUrl: string): Promise<{ route: RouteLoad; process: RunningProcess }> {
  const peer = startProcess(process.execPath, ['--import', 'tsx', 'test/bench/peer-server.ts', postgresUrl], {});
  const [, port, token] = await listeningLine('the one-process peer', peer);
  return { route: { url: `http://127.0.0.1:${port}/api/v1/auth/me`, headers: { authorization: `Bearer ${token}` } }, process: peer };
}

/**
 * The two processes of test/bench/hop-server.ts, run as the mesh runs its replicas: the same answer
 * given by the caller itself (`local`) and fetched from the callee over gRPC (`hop`).
 */
export async function startHop(): Promise<{ local: RouteLoad; hop: RouteLoad; stop: () => Promise<void> }> {
  const start = (...args: string[]) => startProcess(process.execPath, [...REPLICA_NODE_ARGUMENTS, '--import', 'tsx', 'test/bench/hop-server.ts', ...args], {});
  const callee = start('callee');
  const calleePort = (await listeningLine('the hop bench callee', callee))[1]!;
  const caller = start('caller', calleePort);
  const port = (await listeningLine('the hop bench caller', caller))[1]!;
  return {
    local: { url: `http://127.0.0.1:${port}/local` },
    hop: { url: `http://127.0.0.1:${port}/hop` },
    stop: async () => {
      await caller.stop();
      await callee.stop();
    },
  };
}

async function listeningLine(what: string, running: RunningProcess): Promise<string[]> {
  const listening = /listening (\d+) ?(\S*)/;
  await waitForOutput(what, running, (output) => listening.test(output), 60_000);
  return listening.exec(running.output()) ?? [];
}

export type RouteLoad = Omit<LoadOptions, 'connections' | 'seconds'>;

/**
 * Loads `route` unmeasured until its rate stops rising: until two runs in a row are no more than
 * 5 % above the best before them. Rounds then compare servers whose hot paths are compiled, not
 * the JIT's warm-up, which a larger server spends more of: the mesh's five processes took ~30 s of
 * load here to reach their steady rate, 65 % above their first seconds'.
 */
export async function warmUp(route: RouteLoad): Promise<void> {
  let best = 0;
  let flat = 0;
  for (let run = 0; run < WARM_UP_RUNS_MAX && flat < 2; run += 1) {
    const { requestsPerSecond } = await runLoad({ ...route, connections: CONNECTIONS, seconds: WARM_UP_SECONDS });
    flat = requestsPerSecond > best * 1.05 ? 0 : flat + 1;
    best = Math.max(best, requestsPerSecond);
  }
}

/** What a route is held to (issue 24), printed beside its figures; a throughput target adds its req/s figure. */
export interface ComparisonTargets {
  shareOfPeer?: number;
  requestsPerSecond?: number;
  p99Ms?: number;
}

/**
 * The route against the bare server (and the one-process peer, when given), each warmed up, then
 * loaded twice in alternating rounds (bare, peer, route, bare, peer, route) so a machine that
 * speeds up or slows down during the run skews no side. Prints every run and the headlines: the route's mean req/s as
 * a share of the bare route's and of the peer's.
 */
export async function compareWithBare(
  label: string,
  route: RouteLoad,
  bareUrl: string,
  options: { peer?: RouteLoad; targets?: ComparisonTargets } = {},
): Promise<number> {
  const shape = { connections: CONNECTIONS, seconds: LOAD_SECONDS };
  const bareLoad = { url: bareUrl, ...(route.method ? { method: route.method } : {}), ...(route.body === undefined ? {} : { body: route.body, headers: { 'content-type': 'application/json' } }) };
  const sides = { bare: bareLoad, ...(options.peer ? { peer: options.peer } : {}), route };
  for (const load of Object.values(sides)) await warmUp(load);
  const runs: Record<string, LoadResult>[] = [];
  for (let round = 0; round < 2; round += 1) {
    const results: Record<string, LoadResult> = {};
    for (const [side, load] of Object.entries(sides)) results[side] = await runLoad({ ...load, ...shape });
    runs.push(results);
  }
  const meanRate = (side: string) => runs.reduce((sum, run) => sum + (run[side]?.requestsPerSecond ?? 0), 0) / runs.length;
  const ratio = meanRate('route') / meanRate('bare');
  const p99 = Math.max(...runs.map((run) => run['route']?.p99 ?? 0));
  console.log(`${label} vs a bare Fastify route${options.peer ? ' and the one-process peer' : ''} (${CONNECTIONS} connections, ${LOAD_SECONDS} s each, load generator in its own process, ${availableParallelism()} cores):`);
  runs.forEach((run, index) => {
    for (const [side, result] of Object.entries(run)) console.log(`  round ${index + 1}: ${side.padEnd(5)} ${describeLoad(result)}`);
  });
  console.log(`  ratio ${label} ÷ bare: ${ratio.toFixed(3)}`);
  recordFigure(`${label}: share of a bare route`, { value: ratio, unit: '', better: 'higher' });
  if (options.peer) {
    const ofPeer = meanRate('route') / meanRate('peer');
    console.log(`  ratio peer ÷ bare: ${(meanRate('peer') / meanRate('bare')).toFixed(3)}; ${label} ÷ peer: ${ofPeer.toFixed(3)}`);
    recordFigure(`${label}: share of the one-process peer`, { value: ofPeer, unit: '', better: 'higher', ...(options.targets?.shareOfPeer === undefined ? {} : { target: options.targets.shareOfPeer }) });
  }
  if (options.targets?.requestsPerSecond !== undefined) {
    recordFigure(`${label}: req/s`, { value: meanRate('route'), unit: 'req/s', better: 'higher', target: options.targets.requestsPerSecond });
  }
  recordFigure(`${label}: p99`, { value: p99, unit: 'ms', better: 'lower', ...(options.targets?.p99Ms === undefined ? {} : { target: options.targets.p99Ms }) });
  return ratio;
}

/** The paced rate CPU per request is measured at: well below every side's ceiling, so no side is starved. */
export const PACED_RATE = 2_000;

/**
 * CPU time per request (user + system, µs) of each role of `pid`'s process tree while `route` is
 * loaded at a fixed PACED_RATE: steadier than req/s on a machine whose other load comes and goes.
 */
export async function cpuPerRequest(pid: number, route: RouteLoad): Promise<Map<string, number>> {
  const before = cpuSample(pid);
  const result = await runLoad({ ...route, connections: CONNECTIONS, seconds: LOAD_SECONDS, overallRate: PACED_RATE });
  return new Map([...cpuSince(before, pid)].map(([role, ms]) => [role, (1000 * ms) / result.total]));
}

/**
 * Where a route's CPU goes on the whole machine when it is loaded flat out: µs per request of each
 * platform part, of PostgreSQL, Redis and NATS, and of the load generator. Judges two designs of
 * the same work by what the machine spends, servers included, not by what one process spends.
 */
export async function machineCpuPerRequest(route: RouteLoad): Promise<{ result: LoadResult; perRequest: Map<string, number>; total: number }> {
  const before = machineCpuSample();
  const result = await runLoad({ ...route, connections: CONNECTIONS, seconds: LOAD_SECONDS });
  const used = machineCpuSince(before);
  // The generator has exited by now: it reports its own CPU time.
  used.set('load generator', result.cpuMs);
  const perRequest = new Map([...used].filter(([, ms]) => ms > 0).map(([role, ms]) => [role, (1000 * ms) / result.total] as const).sort((a, b) => b[1] - a[1]));
  return { result, perRequest, total: [...perRequest.values()].reduce((sum, us) => sum + us, 0) };
}

export function describeCpuPerRequest({ perRequest, total }: { perRequest: ReadonlyMap<string, number>; total: number }): string {
  return `${Math.round(total)} µs per request in all: ${[...perRequest].filter(([, us]) => us >= 1).map(([role, us]) => `${role} ${Math.round(us)}`).join(', ')}`;
}
