/**
 * The mesh with two identity replicas (decisions §18.2): the gateway's reads spread over both, a
 * replica killed with SIGKILL under load loses its share without one failed read, and once it is
 * back it gets its share again. And two agent-memory replicas, each with its own embedded vector
 * index, that answer a search alike (§18.6).
 */
import { randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Api, newAccount, type Account } from '../e2e/harness/client.js';
import { startDistributedPlatform, warningsOf, type DistributedPlatform } from '../e2e/harness/setup-distributed.js';
import type { MeshReplica } from '@agent-platform/local/mesh';
import { replicaSum } from '../support/replica-metrics.js';

let platform: DistributedPlatform;
let api: Api;
let account: Account;
let identities: MeshReplica[];

beforeAll(async () => {
  platform = await startDistributedPlatform({ replicas: { identity: 2, 'agent-memory': 2 }, env: { RATE_LIMITS: 'free:0/0,pro:0/0,enterprise:0/0' } });
  api = new Api(platform.baseUrl);
  account = await newAccount(api);
  identities = platform.mesh.replicas.filter((replica) => replica.part === 'identity');
}, 180_000);

afterAll(async () => {
  await platform?.stop();
});

/** How many calls of `method` a replica has answered, from its own /metrics. */
function callsOf(method: string, replica: MeshReplica): Promise<number> {
  return replicaSum(replica, 'rpc_server_call_duration_count', (line) => line.includes(`rpc_method="${method}"`));
}

const currentUserCalls = (replica: MeshReplica) => callsOf('GetCurrentUser', replica);

/**
 * `GET /auth/me` from `workers` callers at once until `until` resolves: the statuses seen, by
 * count, and what each answer other than 200 said (so a rare failure says why).
 */
async function readUnder(until: Promise<unknown>, workers = 4): Promise<{ statuses: Map<number, number>; failures: string[] }> {
  const statuses = new Map<number, number>();
  const failures: string[] = [];
  let done = false;
  void until.finally(() => (done = true));
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (!done) {
        const { status, body } = await api.get('/api/v1/auth/me', { token: account.accessToken });
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
        if (status !== 200) failures.push(`${status} ${JSON.stringify(body)}`);
      }
    }),
  );
  return { statuses, failures };
}

describe('the mesh with two identity replicas', () => {
  it('spreads the reads over both', async () => {
    const before = await Promise.all(identities.map(currentUserCalls));
    for (let call = 0; call < 100; call += 1) expect((await api.get('/api/v1/auth/me', { token: account.accessToken })).status).toBe(200);
    const answered = (await Promise.all(identities.map(currentUserCalls))).map((count, index) => count - before[index]!);
    expect(answered.reduce((sum, count) => sum + count, 0)).toBe(100);
    // Per call, not per connection: each gets about half.
    for (const count of answered) expect(count).toBeGreaterThanOrEqual(30);
  });

  it('loses a replica killed under load without one failed read, and gives it its share again once it is back', async () => {
    const [doomed, survivor] = identities;
    const survivorBefore = await currentUserCalls(survivor!);
    let killed!: () => void;
    const afterKill = new Promise<void>((resolve) => (killed = resolve));
    // Reads run throughout: the kill lands among calls in flight; the load stops 300 reads after it.
    const load = readUnder(
      afterKill.then(async () => {
        for (let read = 0; read < 300; read += 1) {
          const { status, body } = await api.get('/api/v1/auth/me', { token: account.accessToken });
          expect(status, JSON.stringify(body)).toBe(200);
        }
      }),
    );
    for (let read = 0; read < 50; read += 1) await api.get('/api/v1/auth/me', { token: account.accessToken });
    await doomed!.kill();
    killed();
    const { statuses, failures } = await load;
    const gatewayWarnings = () => platform.mesh.replicas.filter((replica) => replica.part === 'gateway').flatMap(warningsOf);
    expect(Object.fromEntries(statuses), [...failures, ...(failures.length > 0 ? gatewayWarnings() : [])].join('\n')).toEqual({ 200: expect.any(Number) });
    console.log(`reads while identity-1 was killed: ${[...statuses].map(([status, count]) => `${count} × ${status}`).join(', ')}`);
    // Every read after the kill was the survivor's.
    expect((await currentUserCalls(survivor!)) - survivorBefore).toBeGreaterThanOrEqual(300);

    await doomed!.start();
    // The sentinel: the restarted replica answers reads again (a new process counts from zero).
    await expect
      .poll(
        async () => {
          await api.get('/api/v1/auth/me', { token: account.accessToken });
          return currentUserCalls(doomed!);
        },
        { timeout: 60_000, interval: 50 },
      )
      .toBeGreaterThan(0);
  });
});

describe('the mesh with two agent-memory replicas, each with its own embedded index', () => {
  it('finds an item added through either in the very next search, whichever answers', async () => {
    const memories = platform.mesh.replicas.filter((replica) => replica.part === 'agent-memory');
    const { client } = account;
    const { data: agent } = await client.POST('/api/v1/agents', { body: { name: 'Courier', type: 'assistant', memory_types: ['semantic'] } });
    const before = await Promise.all(memories.map((replica) => callsOf('SearchMemory', replica)));
    const missed: string[] = [];
    for (let round = 0; round < 20; round += 1) {
      // A made-up word, searched for in the plural: the full-text half cannot match it, only the vector index (by its trigrams).
      const word = Array.from({ length: 9 }, () => String.fromCharCode(97 + randomInt(26))).join('');
      const added = await client.POST('/api/v1/memory', { body: { agent_id: agent!.id, memory_type: 'semantic', content: `Parcel for ${word}`, metadata: {} } });
      expect(added.response.status).toBe(201);
      // Calls go round the replicas in turn: of an add and two searches, each replica answers a search and adds every other round.
      for (const _search of [1, 2]) {
        const { data: search } = await client.POST('/api/v1/memory/search', { body: { agent_id: agent!.id, query: `${word}s`, top_k: 1 } });
        if (search?.results[0]?.content !== `Parcel for ${word}`) missed.push(word);
      }
    }
    expect(missed).toEqual([]);
    const answered = (await Promise.all(memories.map((replica) => callsOf('SearchMemory', replica)))).map((count, index) => count - before[index]!);
    for (const count of answered) expect(count).toBeGreaterThanOrEqual(10);
  });
});
