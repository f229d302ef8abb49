/**
 * Where the time of one route goes: starts the all-in-one platform under `--cpu-prof`, loads the
 * route from a load generator in its own process, stops the platform and prints the profile's
 * self time grouped by package (and the top functions), so a change can be judged by what it
 * removes rather than by a guess.
 * Run: pnpm bench:profile [auth-me|agent|search|chat|chat-quiet|hook] [seconds] [cpu|alloc|live|promoted]   (the .cpuprofile is kept for DevTools)
 * `alloc` prints the bytes allocated per request instead, by package and function, from V8's
 * sampling heap profiler driven over the platform's inspector port: a count that stays put where
 * the machine's speed does not, so a change of a few per cent shows. `live` and `promoted` print
 * the same, of the samples each keeps (HEAP_MEASURES below).
 * `chat` is a turn of the offline model whose fact is then extracted (decisions §14.2), so the
 * profile holds both; `chat-quiet` the same turn with extraction off. `hook` triggers the
 * executions bench's workflow (webhook → condition → http to a local receiver) through `/hooks`:
 * the accept, the run and its events, all in the one process's profile.
 * BENCH_PROFILE_DATA_DIR keeps the platform's data there between runs, so a large memory
 * (BENCH_PROFILE_DOCUMENTS) is stored once and profiled many times.
 * BENCH_PROFILE_MESH=1 profiles the mesh instead (`startMesh`, one replica of each part, each its
 * own compiled process): CPU per request and the profile of every replica that worked (cpu only).
 */
import { mkdir, mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RequestBody } from '@agent-platform/client';
import { freePort, startLocalPlatformProcess } from '../e2e/harness/processes.js';
import { startDistributedPlatform } from '../e2e/harness/setup-distributed.js';
import { describeLoad, runLoad } from './load.js';
import { createReceiverWorkflow, startCountingReceiver } from './counting-receiver.js';
import { documentText } from './documents.js';
import { dataOf, signIn, UNLIMITED } from './platform.js';
import { cpuSample, cpuSince } from './process-memory.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
/** V8's sampling heap profile: a call tree whose nodes hold the bytes allocated right there. */
interface AllocationNode {
  callFrame: ProfileNode['callFrame'];
  selfSize: number;
  children: AllocationNode[];
}
interface CpuProfile {
  startTime: number;
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const route = process.argv[2] ?? 'auth-me';
const seconds = Number(process.argv[3] ?? 10);
/**
 * What each heap measure keeps of V8's allocation samples: `alloc` every byte; `live` only what
 * was still alive when the load ended; `promoted` what outlived the young generation, whether a
 * full collection took it later or not: what fills the old generation between full collections.
 */
const HEAP_MEASURES = {
  alloc: { collectedByMajorGC: true, collectedByMinorGC: true, what: 'allocated' },
  live: { collectedByMajorGC: false, collectedByMinorGC: false, what: 'still alive when the load ended' },
  promoted: { collectedByMajorGC: true, collectedByMinorGC: false, what: 'promoted to the old generation (alive after young-generation collections)' },
} as const;
const measure = process.argv[4] ?? 'cpu';
if (measure !== 'cpu' && !Object.hasOwn(HEAP_MEASURES, measure)) throw new Error(`unknown measure ${measure}: cpu, ${Object.keys(HEAP_MEASURES).join(', ')}`);
const heapMeasure = measure === 'cpu' ? undefined : HEAP_MEASURES[measure as keyof typeof HEAP_MEASURES];
const dir = await mkdtemp(join(tmpdir(), 'agent-platform-profile-'));
const inspectorPort = await freePort();
const keptDataDir = process.env.BENCH_PROFILE_DATA_DIR;
if (keptDataDir !== undefined) await mkdir(keptDataDir, { recursive: true });
const profiledMesh = process.env.BENCH_PROFILE_MESH === '1';
if (profiledMesh && measure !== 'cpu') throw new Error('BENCH_PROFILE_MESH profiles cpu only');
const env = { LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn', ...UNLIMITED, ...(route === 'hook' ? { ALLOW_PRIVATE_NETWORK_URLS: 'true' } : {}) };
const platform = profiledMesh
  ? await meshPlatform()
  : await startLocalPlatformProcess({
      dataDir: keptDataDir ?? dir,
      port: await freePort(),
      nodeOptions: measure === 'cpu' ? ['--cpu-prof', '--cpu-prof-dir', dir] : [`--inspect=127.0.0.1:${inspectorPort}`],
      env,
    });

/** The mesh, as the rest of the script uses a platform, with each replica's process id and name. */
async function meshPlatform() {
  const mesh = await startDistributedPlatform({ env: { ...env, NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${dir}` } });
  return {
    baseUrl: mesh.baseUrl,
    child: { pid: undefined },
    pids: () => new Map(mesh.mesh.replicas.map((replica) => [replica.process.child.pid!, replica.name])),
    stop: () => mesh.stop(),
    output: () => mesh.mesh.replicas.map((replica) => replica.process.output()).join('\n'),
  };
}
const { baseUrl } = platform;
const { client, accessToken } = await signIn(baseUrl, keptDataDir === undefined ? undefined : 'profile@example.com');
const authorization = { authorization: `Bearer ${accessToken}` };
const json = { ...authorization, 'content-type': 'application/json' };
const existing = dataOf(await client.GET('/api/v1/agents'), 'listing agents').agents[0]?.id;
const createAgent = async (): Promise<string> =>
  dataOf(await client.POST('/api/v1/agents', { body: { name: 'Profile', type: 'assistant', memory_types: ['semantic', 'episodic'] } }), 'creating an agent').id;
const agentId = existing ?? (await createAgent());
// BENCH_PROFILE_DOCUMENTS=n stores n documents of ~1 MB (~1,600 items each) first, for search at
// scale (once: an agent kept in BENCH_PROFILE_DATA_DIR already has them).
for (let index = 0; !existing && index < Number(process.env.BENCH_PROFILE_DOCUMENTS ?? 0); index += 1) {
  dataOf(await client.POST('/api/v1/memory/documents', { body: { agent_id: agentId, content: documentText(index) } }), 'storing a document');
}
const search = { agent_id: agentId, query: 'where is the refund of ref_3_1200', top_k: 5 } satisfies RequestBody<'/api/v1/memory/search', 'post'>;
if (route === 'chat-quiet') {
  dataOf(await client.PATCH('/api/v1/agents/{agent_id}', { params: { path: { agent_id: agentId } }, body: { config: { memory_extraction: false } } }), 'turning extraction off');
}
const turn = { message: 'I live at number 7.', user_id: 'profile-user' } satisfies RequestBody<'/api/v1/agents/{agent_id}/chat', 'post'>;
const chat = { url: `${baseUrl}/api/v1/agents/${agentId}/chat`, method: 'POST' as const, headers: json, body: JSON.stringify(turn) };
const receiver = route === 'hook' ? await startCountingReceiver() : undefined;
const hook = receiver && (await createReceiverWorkflow(client, baseUrl, receiver.url)).hookLoad;
const load = {
  'auth-me': { url: `${baseUrl}/api/v1/auth/me`, headers: authorization },
  agent: { url: `${baseUrl}/api/v1/agents/${agentId}`, headers: authorization },
  search: { url: `${baseUrl}/api/v1/memory/search`, method: 'POST' as const, headers: json, body: JSON.stringify(search) },
  chat,
  'chat-quiet': chat,
  ...(hook ? { hook } : {}),
}[route];
if (!load) throw new Error(`unknown route ${route}: auth-me, agent, search, chat, chat-quiet or hook`);
// A warm-up round, so the profile shows the steady state rather than the JIT compiling.
// (Longer with BENCH_PROFILE_WARMUP_SECONDS, e.g. while a large vector index is still being built.)
await runLoad({ ...load, connections: 50, seconds: Number(process.env.BENCH_PROFILE_WARMUP_SECONDS ?? 3) });
// Profile timestamps and hrtime share the monotonic clock: only samples taken under load count.
const loadStarted = process.hrtime.bigint() / 1000n;
// The mesh's replicas one by one (each its own process); the all-in-one's process tree by role.
const replicaPids = 'pids' in platform ? platform.pids() : undefined;
const replicaCpuBefore = new Map([...(replicaPids?.keys() ?? [])].map((pid) => [pid, cpuSample(pid)]));
const platformCpuBefore = replicaPids ? undefined : cpuSample(platform.child.pid!);
const inspector = heapMeasure && (await connectInspector(inspectorPort));
await inspector?.call('HeapProfiler.startSampling', {
  samplingInterval: 1024,
  includeObjectsCollectedByMajorGC: heapMeasure?.collectedByMajorGC,
  includeObjectsCollectedByMinorGC: heapMeasure?.collectedByMinorGC,
});
const result = await runLoad({ ...load, connections: 50, seconds });
const allocations = (await inspector?.call('HeapProfiler.stopSampling')) as { profile: { head: AllocationNode } } | undefined;
inspector?.close();
const loadEnded = process.hrtime.bigint() / 1000n;
const perRequest = (ms: number | undefined) => `${((1000 * (ms ?? 0)) / result.total).toFixed(0)} µs`;
if (replicaPids) {
  const byReplica = [...replicaPids].map(([pid, name]) => `${name} ${perRequest(cpuSince(replicaCpuBefore.get(pid)!, pid).get('platform'))}`);
  console.log(`${describeLoad(result)}; CPU per request: ${byReplica.join(', ')}`);
} else {
  const cpuUsed = cpuSince(platformCpuBefore!, platform.child.pid!);
  console.log(`${describeLoad(result)}; CPU per request: platform ${perRequest(cpuUsed.get('platform'))}, PostgreSQL ${perRequest(cpuUsed.get('postgres'))}${measure === 'cpu' ? '' : ' (slowed by the sampling)'}`);
}
await platform.stop();
receiver?.close();
if (allocations && heapMeasure) {
  printAllocations(allocations.profile.head, result.total, heapMeasure.what);
  process.exit(0);
}

const files = (await readdir(dir)).filter((name) => name.endsWith('.cpuprofile'));
if (files.length === 0) throw new Error(`no profile written:\n${platform.output()}`);
for (const file of files) {
  // CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile
  const pid = Number(file.split('.')[3]);
  const thread = Number(file.split('.')[4]);
  const name = replicaPids ? replicaPids.get(pid) : 'platform';
  if (name !== undefined) await summarize(join(dir, file), thread === 0 ? name : `${name} (thread ${thread})`);
}

/** Self time under load of one profile, by package and by function. */
async function summarize(path: string, name: string): Promise<void> {
  const profile = JSON.parse(await readFile(path, 'utf8')) as CpuProfile;
  const selfMicros = new Map<number, number>();
  let at = profile.startTime;
  profile.samples.forEach((id, index) => {
    const delta = profile.timeDeltas[index] ?? 0;
    at += delta;
    if (at >= Number(loadStarted) && at <= Number(loadEnded)) selfMicros.set(id, (selfMicros.get(id) ?? 0) + delta);
  });
  // A native frame (a socket write, a TextDecoder) is charged to the package that called it.
  const parentOf = new Map<number, ProfileNode>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node);
  const callerGroup = (node: ProfileNode): string => {
    for (let up: ProfileNode | undefined = node; up; up = parentOf.get(up.id)) {
      if (up.callFrame.url !== '') return groupOf(up.callFrame.url, up.callFrame.functionName);
    }
    return groupOf('', node.callFrame.functionName);
  };
  const total = [...selfMicros.values()].reduce((sum, value) => sum + value, 0);
  const byGroup = new Map<string, number>();
  const byFunction = new Map<string, number>();
  for (const node of profile.nodes) {
    const micros = selfMicros.get(node.id) ?? 0;
    if (micros === 0) continue;
    const { url, functionName, lineNumber } = node.callFrame;
    const group = callerGroup(node);
    byGroup.set(group, (byGroup.get(group) ?? 0) + micros);
    const where = `${functionName || '(anonymous)'} ${shortUrl(url)}:${lineNumber + 1}`;
    byFunction.set(where, (byFunction.get(where) ?? 0) + micros);
  }
  const idle = profile.nodes.filter((node) => node.callFrame.functionName === '(idle)').reduce((sum, node) => sum + (selfMicros.get(node.id) ?? 0), 0);
  const busy = total - idle;
  const share = (micros: number) => `${((100 * micros) / total).toFixed(1).padStart(5)} %`;
  console.log(`${name}: self time by package, natives charged to their caller (${(total / 1e6).toFixed(1)} s under load, ${(busy / 1e6).toFixed(1)} s not idle):`);
  console.log(ranked(byGroup, 25, share));
  console.log(`${name}: top functions:`);
  console.log(ranked(byFunction, 30, share));
  console.log(`${name}: profile ${path}`);
}

/** A Chrome DevTools Protocol session with the platform's main thread, over its inspector port. */
async function connectInspector(port: number) {
  const [target] = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as { webSocketDebuggerUrl: string }[];
  if (!target) throw new Error('the platform lists no inspector target');
  const socket = new WebSocket(target.webSocketDebuggerUrl);
  await new Promise((resolve, reject) => {
    socket.addEventListener('open', resolve, { once: true });
    socket.addEventListener('error', reject, { once: true });
  });
  const waiting = new Map<number, { resolve: (result: unknown) => void; reject: (error: Error) => void }>();
  socket.addEventListener('message', (event) => {
    const answer = JSON.parse(String(event.data)) as { id?: number; result?: unknown; error?: { message: string } };
    const caller = answer.id === undefined ? undefined : waiting.get(answer.id);
    if (!caller) return;
    waiting.delete(answer.id!);
    if (answer.error) caller.reject(new Error(answer.error.message));
    else caller.resolve(answer.result);
  });
  let lastId = 0;
  return {
    call: (method: string, params: object = {}) =>
      new Promise<unknown>((resolve, reject) => {
        lastId += 1;
        waiting.set(lastId, { resolve, reject });
        socket.send(JSON.stringify({ id: lastId, method, params }));
      }),
    close: () => socket.close(),
  };
}

/** Sampled bytes per request (allocated, or still alive at the end), by package (natives charged to their caller) and by function. */
function printAllocations(head: AllocationNode, requests: number, what: string): void {
  const byGroup = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let total = 0;
  const visit = (node: AllocationNode, callerGroup: string) => {
    const { url, functionName, lineNumber } = node.callFrame;
    const group = url === '' ? callerGroup : groupOf(url, functionName);
    total += node.selfSize;
    byGroup.set(group, (byGroup.get(group) ?? 0) + node.selfSize);
    const where = `${functionName || '(anonymous)'} ${url === '' ? `(native, from ${group})` : `${shortUrl(url)}:${lineNumber + 1}`}`;
    byFunction.set(where, (byFunction.get(where) ?? 0) + node.selfSize);
    for (const child of node.children) visit(child, group);
  };
  visit(head, '(native)');
  const perRequest = (bytes: number) => `${String(Math.round(bytes / requests)).padStart(6)} B`;
  console.log(`${what}, per request: ${Math.round(total / requests)} B (sampled over ${requests} requests), by package, natives charged to their caller:`);
  console.log(ranked(byGroup, 25, perRequest));
  console.log('top functions:');
  console.log(ranked(byFunction, 30, perRequest));
}

/** The `count` largest entries of `map`, one line each, the amount as `format` writes it. */
function ranked(map: Map<string, number>, count: number, format: (amount: number) => string): string {
  return [...map.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([name, amount]) => `  ${format(amount)}  ${name}`)
    .join('\n');
}

function shortUrl(url: string): string {
  return url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*?\/(services|gateway|packages)\//, '$1/');
}

function groupOf(url: string, functionName: string): string {
  if (url === '') return `(${functionName || 'native'})`;
  const pkg = /node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1];
  if (pkg) return pkg;
  // node:internal/http2/core → node:internal/http2; node:events stays.
  if (url.startsWith('node:')) return url.split('/').slice(0, 2).join('/');
  const own = /\/(services\/[^/]+|gateway|packages\/[^/]+|deploy\/[^/]+)\//.exec(url)?.[1];
  return own ?? url;
}
