/**
 * Replica faults under steady mixed load (decisions §18.4): one replica of each part killed with
 * SIGKILL in turn and started again, then PostgreSQL restarted, then NATS. Reads are retried onto
 * a live replica; a write in flight on the killed replica fails with a retryable 502/503, never a
 * hang or a 500; nothing accepted is lost or repeated. Background runs in flight on the
 * agent-memory replica killed (decisions §16) end on the other, or on it back, completed or failed
 * saying why: none lost, none charged twice, no tool call run twice. The mesh runs on a PostgreSQL
 * and a NATS of its own, so that restarting them touches no other suite. Run once, not per mode.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '@agent-platform/kit';
import { freePort } from '@agent-platform/kit/testing';
import { MESH_PARTS, startEmbeddedPostgres, type MeshReplica } from '@agent-platform/local';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { signIn } from '../bench/platform.js';
import { accountRuns, armAgent, describeRuns, expectNothingLost, queueRuns, runsOf } from '../support/background-runs.js';
import { account, describeRun, startLoad, startLoadedMesh, type LoadedMesh } from '../support/mesh-load.js';

const logger = createLogger({ service: 'mesh-faults', level: 'silent' });
/** Background runs queued just before the agent-memory replica is killed. */
const RUNS = 12;
let dataDir: string;
let pgPort: number;
let postgres: Awaited<ReturnType<typeof startEmbeddedPostgres>>;
let mesh: LoadedMesh;

const startPostgres = () => startEmbeddedPostgres({ dataDir, port: pgPort, databases: [], logger });

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'mesh-faults-'));
  pgPort = await freePort();
  postgres = await startPostgres();
  // Work a killed replica held is claimed by the other within seconds, not the default 30.
  // Background runs call a tool on loopback.
  mesh = await startLoadedMesh({ adminUrl: postgres.urlFor('postgres'), env: { EXECUTION_LEASE_MS: '2000', EXECUTION_POLL_INTERVAL_MS: '200', ALLOW_PRIVATE_NETWORK_URLS: 'true' } });
}, 240_000);

afterAll(async () => {
  await mesh?.close();
  await postgres?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

/** Resolves once `count` more requests of the load have been answered: the sentinel that time under the fault has passed with traffic. */
async function answered(load: ReturnType<typeof startLoad>, count: number): Promise<void> {
  const from = load.progress();
  await expect.poll(() => load.progress() - from, { timeout: 120_000, interval: 20 }).toBeGreaterThanOrEqual(count);
}

/** The front door answers a read again (the mesh is whole after a fault of a shared server). */
async function whole(): Promise<void> {
  await expect.poll(async () => (await fetch(`${mesh.front.url}/readyz`)).status, { timeout: 120_000, interval: 100 }).toBe(200);
}

it('survives a SIGKILL of each part in turn, a PostgreSQL restart and a NATS restart, losing and repeating nothing', async () => {
  const { platform, target } = mesh;
  const runner = await signIn(mesh.front.url);
  const armed = await armAgent(runner.client);
  const load = startLoad(target);
  await answered(load, 200);
  const started: string[] = [];
  for (const part of MESH_PARTS) {
    const victim: MeshReplica = platform.mesh.replicas.find((replica) => replica.part === part)!;
    if (part === 'agent-memory') {
      started.push(...(await queueRuns(runner.client, armed.agentId, RUNS)));
      // The sentinel: runs are past their tool call on both replicas, others in it or waiting.
      await expect.poll(async () => (await runsOf(runner.client, armed.agentId)).filter((run) => run.status === 'completed').length, { timeout: 60_000, interval: 100 }).toBeGreaterThanOrEqual(2);
    }
    load.phase(`SIGKILL ${victim.name}`);
    await victim.kill();
    await answered(load, 150);
    await victim.start();
    load.phase(`${victim.name} back`);
    await answered(load, 50);
    if (part === 'agent-memory') {
      // Ended before PostgreSQL's restart, which would fail a run in flight for a reason of its own.
      await expect.poll(async () => (await runsOf(runner.client, armed.agentId)).every((run) => run.status === 'completed' || run.status === 'failed'), { timeout: 120_000, interval: 250 }).toBe(true);
    }
  }
  load.phase('PostgreSQL restart');
  await postgres.stop();
  await answered(load, 100);
  postgres = await startPostgres();
  await whole();
  load.phase('PostgreSQL back');
  await answered(load, 150);
  load.phase('NATS restart');
  const nats = platform.nats;
  await nats.stop();
  await answered(load, 150);
  await nats.start();
  load.phase('NATS back');
  await answered(load, 300);

  const report = await load.stop();
  const accounting = await account(target, report);
  console.log(describeRun('SIGKILL of one replica of each of 5 parts, PostgreSQL and NATS restarts', report, accounting));
  const runs = await accountRuns(runner.client, armed, started);
  await armed.tool.close();
  console.log(`background runs across a SIGKILL of one agent-memory replica of two: started ${RUNS}; ${describeRuns(runs)}`);
  expectNothingLost(runs, RUNS);
  // Success, or a clear retryable 503 while a replica or PostgreSQL was down; never a 500 or a 504.
  // A request in flight on the gateway killed is the load balancer's to answer: its 502, or its
  // connection closed without an answer (0). NATS away delays events only: every request succeeds.
  const allowed = (phase: string) => (phase.startsWith('SIGKILL gateway') ? [0, 502, 503] : phase.startsWith('SIGKILL') || phase.startsWith('PostgreSQL restart') ? [503] : []);
  for (const [phase, counts] of Object.entries(report.phases)) {
    const failed = Object.keys(counts).map(Number).filter((status) => status >= 300 && !allowed(phase).includes(status));
    expect(failed, `${phase}: ${JSON.stringify(counts)}`).toEqual([]);
  }
  expect(accounting).toMatchObject({ lost: { memory: 0, executions: 0, deliveries: 0 }, repeated: { executions: 0, deliveries: 0 } });
  // Only attempts in flight when their dispatcher was killed are sent again: a handful at most.
  expect(accounting.resent).toBeLessThanOrEqual(5);
}, 900_000);
