import { availableParallelism } from 'node:os';
import { startProcess, waitForOutput, type RunningProcess } from '../e2e/harness/processes.js';
import { recordFigure } from './figures.js';

export interface LoadOptions {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  connections: number;
  seconds: number;
}

export interface LoadResult {
  requestsPerSecond: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  total: number;
}

/** `pnpm bench --quick` (or BENCH_SECONDS) shortens every timed run; figures are then indicative only. */
export const QUICK = process.env.BENCH_QUICK === '1';
export const LOAD_SECONDS = Number(process.env.BENCH_SECONDS ?? (QUICK ? 3 : 10));
export const CONNECTIONS = 50;

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
  const listening = /listening (\d+)/;
  await waitForOutput('the bare Fastify server', bare, (output) => listening.test(output), 30_000);
  const port = Number(listening.exec(bare.output())?.[1]);
  return { url: `http://127.0.0.1:${port}/`, process: bare };
}

/**
 * The route against the bare server, each loaded twice, alternating (bare, route, bare, route) so a
 * machine that speeds up or slows down during the run skews neither side. Prints every run and the
 * headline: the route's mean req/s as a share of the bare route's.
 */
export async function compareWithBare(label: string, route: Omit<LoadOptions, 'connections' | 'seconds'>, bareUrl: string): Promise<number> {
  const shape = { connections: CONNECTIONS, seconds: LOAD_SECONDS };
  const bareLoad = { url: bareUrl, ...shape, ...(route.method ? { method: route.method } : {}), ...(route.body === undefined ? {} : { body: route.body, headers: { 'content-type': 'application/json' } }) };
  const runs: { bare: LoadResult; route: LoadResult }[] = [];
  for (let round = 0; round < 2; round += 1) runs.push({ bare: await runLoad(bareLoad), route: await runLoad({ ...route, ...shape }) });
  const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
  const ratio = mean(runs.map((run) => run.route.requestsPerSecond)) / mean(runs.map((run) => run.bare.requestsPerSecond));
  console.log(`${label} vs a bare Fastify route (${CONNECTIONS} connections, ${LOAD_SECONDS} s each, load generator in its own process, ${availableParallelism()} cores):`);
  runs.forEach((run, index) => {
    console.log(`  round ${index + 1}: bare ${describeLoad(run.bare)}`);
    console.log(`  round ${index + 1}: route ${describeLoad(run.route)}`);
  });
  console.log(`  ratio ${label} ÷ bare: ${ratio.toFixed(3)}`);
  recordFigure(`${label}: share of a bare route`, { value: ratio, unit: '', better: 'higher' });
  recordFigure(`${label}: p99`, { value: Math.max(...runs.map((run) => run.route.p99)), unit: 'ms', better: 'lower' });
  return ratio;
}
