/**
 * `pnpm start:mesh` as a developer runs it: every part its own process, replicas by
 * MESH_REPLICAS, the front door printed and serving; Ctrl-C drains and stops every replica.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { startTestNatsServer } from '@agent-platform/kit/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { Api, newAccount } from '../e2e/harness/client.js';
import { freePort, startProcess, waitForOutput } from '../e2e/harness/processes.js';
import { ADMIN_URL } from '../e2e/harness/setup-distributed.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

function startMeshCli(env: Record<string, string>) {
  return startProcess(process.execPath, ['--import', 'tsx', 'deploy/local/src/mesh/main.ts'], env);
}

const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

describe('pnpm start:mesh', () => {
  it('runs every part as its own process with the replicas asked for, serves through one front door (memory alike from either agent-memory), and stops them all on Ctrl-C', async () => {
    const prefix = `mesh_${randomBytes(3).toString('hex')}_`;
    const nats = await startTestNatsServer();
    const dataDir = await mkdtemp(join(tmpdir(), 'mesh-'));
    cleanups.push(() => nats.dispose(), () => rm(dataDir, { recursive: true, force: true }), () => dropDatabases(prefix));
    const port = await freePort();
    const mesh = startMeshCli({
      PORT: String(port),
      DATABASE_URL: ADMIN_URL,
      DATABASE_NAME_PREFIX: prefix,
      NATS_URL: nats.url,
      DATA_DIR: dataDir,
      MESH_REPLICAS: 'gateway=2,workflow-runner=2,agent-memory=2',
      TRUST_PROXY: 'true',
    });
    cleanups.push(() => mesh.stop(5_000));
    await waitForOutput('pnpm start:mesh', mesh, (output) => output.includes('Press Ctrl-C'), 180_000);

    const printed = mesh.output();
    expect(printed).toContain(`Agent platform mesh running at http://127.0.0.1:${port}`);
    const replicaLine = (part: string) => new RegExp(`^  ${part} +(.+)$`, 'm').exec(printed)?.[1]?.split(', ') ?? [];
    expect(replicaLine('gateway')).toHaveLength(2);
    expect(replicaLine('workflow-runner')).toHaveLength(2);
    expect(replicaLine('agent-memory')).toHaveLength(2);
    expect(replicaLine('identity')).toHaveLength(1);
    const ports = ['identity', 'webhook-dispatcher', 'agent-memory', 'workflow-runner', 'gateway'].flatMap((part) => replicaLine(part).map((where) => Number(where.split(':').at(-1))));
    expect(ports).toHaveLength(8);
    for (const replicaPort of ports) expect(await listening(replicaPort), `replica on ${replicaPort}`).toBe(true);

    // A user of the front door: the balancer in front of the two gateways, then the services.
    const api = new Api(`http://127.0.0.1:${port}`);
    const account = await newAccount(api);
    for (let read = 0; read < 10; read += 1) expect((await api.get('/api/v1/auth/me', { token: account.accessToken })).status).toBe(200);
    // Two agent-memory replicas with an embedded index each: what one stored, the other's search finds (decisions §18.6).
    const { data: agent } = await account.client.POST('/api/v1/agents', { body: { name: 'Courier', type: 'assistant', memory_types: ['semantic'] } });
    for (const word of ['quillbrook', 'fernwhistle', 'marrowdale']) {
      await account.client.POST('/api/v1/memory', { body: { agent_id: agent!.id, memory_type: 'semantic', content: `Parcel for ${word}`, metadata: {} } });
      for (const _search of [1, 2]) {
        const { data: search } = await account.client.POST('/api/v1/memory/search', { body: { agent_id: agent!.id, query: `${word}s`, top_k: 1 } });
        expect(search?.results[0]?.content).toBe(`Parcel for ${word}`);
      }
    }

    expect(await mesh.stop(60_000)).toBe(0);
    expect(mesh.output()).toContain('draining and stopping every replica');
    for (const replicaPort of ports) expect(await listening(replicaPort), `replica on ${replicaPort} after Ctrl-C`).toBe(false);
  }, 240_000);

  it('says what is wrong with MESH_REPLICAS', async () => {
    const mesh = startMeshCli({ MESH_REPLICAS: 'gateway=two' });
    expect(await exitOf(mesh.child), mesh.output()).toEqual({ code: 1, signal: null });
    expect(mesh.output()).toContain('MESH_REPLICAS: must be a count (1–99) or part=count pairs');
  });
});

function exitOf(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

async function dropDatabases(prefix: string): Promise<void> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    const { rows } = await client.query<{ datname: string }>('SELECT datname FROM pg_database WHERE starts_with(datname, $1)', [prefix]);
    for (const { datname } of rows) await client.query(`DROP DATABASE IF EXISTS ${client.escapeIdentifier(datname)} WITH (FORCE)`);
  } finally {
    await client.end();
  }
}
