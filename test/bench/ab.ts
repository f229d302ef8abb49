/**
 * Is this checkout cheaper than another commit? Starts both all-in-one platforms (the commit in a
 * worktree of its own), loads authenticated GET /api/v1/auth/me on both at once in short rounds at
 * a paced rate, and prints the CPU each spends per request. Measured at the same moments, both
 * feel a machine whose speed comes and goes alike: the ratio holds where req/s measured minutes
 * apart moves by half.
 * Run: pnpm bench:ab [commit (HEAD)] [rounds (10)] [seconds per round (3)]
 * BENCH_AB_ENV='{"NAME":"value"}' sets variables for this checkout's platform only: a setting's cost.
 * The worktree stays under the system's temporary directory for the next run against that commit.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT, startLocalPlatformProcess, type LocalPlatformProcess } from '../e2e/harness/processes.js';
import { runLoad, type RouteLoad } from './load.js';
import { signIn, UNLIMITED } from './platform.js';
import { cpuSample, cpuSince } from './process-memory.js';

const [ref = 'HEAD', roundsArgument = '10', secondsArgument = '3'] = process.argv.slice(2);
const rounds = Number(roundsArgument);
const seconds = Number(secondsArgument);
if (!Number.isInteger(rounds) || rounds < 1 || !(seconds > 0)) throw new Error('usage: pnpm bench:ab [commit] [rounds ≥ 1] [seconds per round > 0]');

const git = (...args: string[]) => execFileSync('git', args, { cwd: REPO_ROOT, encoding: 'utf8' }).trim();
const commit = git('rev-parse', '--verify', `${ref}^{commit}`);
const baseRoot = join(tmpdir(), `agent-platform-ab-${commit.slice(0, 12)}`);
// Written once the worktree is installed and generated, so a setup cut short is redone.
const baseReady = join(baseRoot, '.bench-ab-ready');
if (!existsSync(baseReady)) {
  if (!existsSync(baseRoot)) git('worktree', 'add', '--detach', baseRoot, commit);
  for (const step of [['install', '--frozen-lockfile', '--prefer-offline'], ['generate']]) {
    execFileSync('pnpm', step, { cwd: baseRoot, stdio: 'inherit' });
  }
  writeFileSync(baseReady, '');
}

interface Side {
  name: string;
  platform: LocalPlatformProcess;
  load: RouteLoad;
  cpuMs: number;
  requests: number;
}

async function start(name: string, root: string, ownEnv: Record<string, string> = {}): Promise<Side> {
  const dataDir = await mkdtemp(join(tmpdir(), 'agent-platform-ab-data-'));
  const platform = await startLocalPlatformProcess({ dataDir, env: { LOG_LEVEL: 'warn', ...UNLIMITED, ...ownEnv }, via: 'pnpm', root });
  const { accessToken } = await signIn(platform.baseUrl);
  return { name, platform, load: { url: `${platform.baseUrl}/api/v1/auth/me`, headers: { authorization: `Bearer ${accessToken}` } }, cpuMs: 0, requests: 0 };
}

// Each side's paced rate: both are loaded at once, so the two together stay below the machine's ceiling.
const RATE = 1_000;

const sides = [await start(`base ${commit.slice(0, 12)}`, baseRoot), await start('this checkout', REPO_ROOT, JSON.parse(process.env.BENCH_AB_ENV ?? '{}') as Record<string, string>)] as const;
const [base, change] = sides;
try {
  // Unpaced warm-up, so both are measured with their hot paths compiled.
  for (const side of sides) await runLoad({ ...side.load, connections: 50, seconds: 3 });
  const roundRatios: number[] = [];
  for (let round = 0; round < rounds; round += 1) {
    const perRequest = new Map<Side, number>();
    await Promise.all(
      sides.map(async (side) => {
        const before = cpuSample(side.platform.child.pid!);
        const result = await runLoad({ ...side.load, connections: 50, seconds, overallRate: RATE });
        const cpuMs = cpuSince(before, side.platform.child.pid!).get('platform') ?? 0;
        side.cpuMs += cpuMs;
        side.requests += result.total;
        perRequest.set(side, (1000 * cpuMs) / result.total);
      }),
    );
    const ratio = perRequest.get(change)! / perRequest.get(base)!;
    roundRatios.push(ratio);
    console.log(`round ${round + 1}: ${sides.map((side) => `${side.name} ${perRequest.get(side)!.toFixed(0)} µs`).join(', ')}; ratio ${ratio.toFixed(3)}`);
  }
  const mean = (side: Side) => (1000 * side.cpuMs) / side.requests;
  roundRatios.sort((a, b) => a - b);
  console.log(
    `platform CPU per /auth/me request at ${RATE} req/s each: ${base.name} ${mean(base).toFixed(0)} µs, ${change.name} ${mean(change).toFixed(0)} µs; ` +
      `this checkout ÷ base ${(mean(change) / mean(base)).toFixed(3)} (rounds ${roundRatios[0]!.toFixed(3)}–${roundRatios.at(-1)!.toFixed(3)}, median ${roundRatios[Math.floor(rounds / 2)]!.toFixed(3)})`,
  );
} finally {
  await Promise.all(sides.map((side) => side.platform.stop()));
}
