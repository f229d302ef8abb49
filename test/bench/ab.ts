/**
 * Is this checkout cheaper than another commit? Starts both all-in-one platforms (the commit in a
 * worktree of its own), loads one route on both at once in short rounds at a paced rate, and
 * prints the CPU each spends per request. Measured at the same moments, both feel a machine whose
 * speed comes and goes alike: the ratio holds where req/s measured minutes apart moves by half.
 * Run: pnpm bench:ab [commit (HEAD)] [rounds (10)] [seconds per round (3; 10 for hook)]
 * BENCH_AB_ROUTE picks the route: `auth-me` (authenticated GET /api/v1/auth/me, the default),
 * `memory-search` (POST /api/v1/memory/search over one agent's 500 items), `chat` (a chat turn of
 * the offline model, each in a new session, its memory search over 500 items included) or `hook` (the
 * executions bench's workflow triggered through /hooks: each request is a whole execution, its
 * run and events included, paced below what the machine completes).
 * BENCH_AB_ENV='{"NAME":"value"}' sets variables for this checkout's platform only: a setting's cost.
 * BENCH_AB_MESH=1 compares the two meshes instead (`pnpm start:mesh`, one replica of each part,
 * each with a NATS server of its own): CPU per request summed over every replica.
 * BENCH_AB_RATE sets each side's paced rate (req/s) instead of the route's own: on a slow machine
 * the two sides together must stay below what it completes.
 * The worktree stays under the system's temporary directory for the next run against that commit.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startTestNatsServer } from '@agent-platform/kit/testing';
import { REPO_ROOT, startLocalPlatformProcess, startProcess, waitForOutput, type LocalPlatformProcess } from '../e2e/harness/processes.js';
import { runLoad, type RouteLoad } from './load.js';
import { createReceiverWorkflow, startCountingReceiver } from './counting-receiver.js';
import { signIn, UNLIMITED, type BenchUser } from './platform.js';
import { cpuSample, cpuSince } from './process-memory.js';

const receiver = await startCountingReceiver();
/**
 * What each route needs. `rate` is each side's paced rate: both are loaded at once, so the two
 * together stay below the machine's ceiling (executions complete at ~1,000 a second on 2 cores);
 * `seconds` the length of a round unless the command line says.
 */
const ROUTES = {
  'auth-me': {
    label: '/auth/me request',
    rate: 1_000,
    seconds: 3,
    env: {},
    load: (baseUrl: string, user: BenchUser): Promise<RouteLoad> => Promise.resolve({ url: `${baseUrl}/api/v1/auth/me`, headers: { authorization: `Bearer ${user.accessToken}` } }),
  },
  'memory-search': {
    label: 'memory search',
    rate: 400,
    seconds: 3,
    env: {},
    load: (baseUrl: string, user: BenchUser): Promise<RouteLoad> => memorySearchLoad(baseUrl, user),
  },
  chat: {
    label: 'chat turn',
    rate: 40,
    seconds: 5,
    env: {},
    load: (baseUrl: string, user: BenchUser): Promise<RouteLoad> => chatLoad(baseUrl, user),
  },
  hook: {
    label: 'workflow execution',
    rate: 300,
    // Longer rounds: an execution's run and events finish after its request, and in 3 s rounds
    // that tail landed in the next round often enough to swing single rounds by ±40 %.
    seconds: 10,
    env: { ALLOW_PRIVATE_NETWORK_URLS: 'true' },
    load: async (baseUrl: string, user: BenchUser): Promise<RouteLoad> => (await createReceiverWorkflow(user.client, baseUrl, receiver.url)).hookLoad,
  },
} as const;
const routeName = process.env.BENCH_AB_ROUTE ?? 'auth-me';
if (!Object.hasOwn(ROUTES, routeName)) throw new Error(`BENCH_AB_ROUTE=${routeName}: one of ${Object.keys(ROUTES).join(', ')}`);
const route = ROUTES[routeName as keyof typeof ROUTES];

const [ref = 'HEAD', roundsArgument = '10', secondsArgument] = process.argv.slice(2);
const rounds = Number(roundsArgument);
const seconds = Number(secondsArgument ?? route.seconds);
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

/** One agent with 500 items of a few shared words; its id. */
async function agentWithItems(user: BenchUser, config: Record<string, unknown> = {}): Promise<string> {
  const { data: agent } = await user.client.POST('/api/v1/agents', { body: { name: 'Bench', type: 'assistant', memory_types: ['semantic'], config } });
  for (let item = 0; item < 500; item += 1) {
    await user.client.POST('/api/v1/memory', { body: { agent_id: agent!.id, memory_type: 'semantic', content: `Order ord_${item} shipped to depot ${item % 7} on day ${item % 30}`, metadata: {} } });
  }
  return agent!.id;
}

/** A chat turn of that agent, without extraction (its own bench measures that), in a new session each. */
async function chatLoad(baseUrl: string, user: BenchUser): Promise<RouteLoad> {
  const agentId = await agentWithItems(user, { memory_extraction: false });
  return {
    url: `${baseUrl}/api/v1/agents/${agentId}/chat`,
    method: 'POST',
    headers: { authorization: `Bearer ${user.accessToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ message: 'Which orders went to depot 3?' }),
  };
}

/** A search over that agent's items. */
async function memorySearchLoad(baseUrl: string, user: BenchUser): Promise<RouteLoad> {
  const agentId = await agentWithItems(user);
  return {
    url: `${baseUrl}/api/v1/memory/search`,
    method: 'POST',
    headers: { authorization: `Bearer ${user.accessToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ agent_id: agentId, query: 'which orders went to depot 3', top_k: 5 }),
  };
}

interface Side {
  name: string;
  platform: LocalPlatformProcess;
  load: RouteLoad;
  cpuMs: number;
  requests: number;
}


const meshes = process.env.BENCH_AB_MESH === '1';
// Two meshes are ten busy processes on the machine: each is paced at half the rate.
const rate = Number(process.env.BENCH_AB_RATE ?? (meshes ? route.rate / 2 : route.rate));

async function start(name: string, root: string, ownEnv: Record<string, string> = {}): Promise<Side> {
  const dataDir = await mkdtemp(join(tmpdir(), 'agent-platform-ab-data-'));
  const env = { LOG_LEVEL: 'warn', ...UNLIMITED, ...route.env, ...ownEnv };
  const platform = meshes ? await startMeshProcess(root, dataDir, env) : await startLocalPlatformProcess({ dataDir, env, via: 'pnpm', root });
  return { name, platform, load: await route.load(platform.baseUrl, await signIn(platform.baseUrl)), cpuMs: 0, requests: 0 };
}

/** `pnpm start:mesh` of a checkout, on databases and a NATS server of its own; its replicas are its children, so its tree's CPU is theirs. */
async function startMeshProcess(root: string, dataDir: string, env: Record<string, string>): Promise<Side['platform']> {
  const nats = await startTestNatsServer();
  const port = await freePort();
  const running = startProcess('pnpm', ['start:mesh'], { ...env, PORT: String(port), DATA_DIR: dataDir, NATS_URL: nats.url, DATABASE_NAME_PREFIX: `ab_${randomBytes(3).toString('hex')}_` }, root);
  await waitForOutput('pnpm start:mesh', running, (output) => output.includes('Press Ctrl-C'), 300_000);
  return {
    ...running,
    baseUrl: `http://127.0.0.1:${port}`,
    msToFirst200: 0,
    stop: async (graceMs) => {
      const code = await running.stop(graceMs ?? 60_000);
      await nats.dispose();
      return code;
    },
  };
}

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
        const result = await runLoad({ ...side.load, connections: 50, seconds, overallRate: rate });
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
    `platform CPU per ${route.label} at ${rate} req/s each: ${base.name} ${mean(base).toFixed(0)} µs, ${change.name} ${mean(change).toFixed(0)} µs; ` +
      `this checkout ÷ base ${(mean(change) / mean(base)).toFixed(3)} (rounds ${roundRatios[0]!.toFixed(3)}–${roundRatios.at(-1)!.toFixed(3)}, median ${roundRatios[Math.floor(rounds / 2)]!.toFixed(3)})`,
  );
} finally {
  await Promise.all(sides.map((side) => side.platform.stop()));
  receiver.close();
}
