/**
 * A rolling restart of the whole mesh under steady mixed load (decisions §18.3): two replicas of
 * every part, the gateways behind HAProxy health-checking `/readyz` as an ingress does, every
 * replica restarted in turn (SIGTERM, drain, start, ready). No request is answered with a 5xx
 * and nothing accepted is lost or repeated. Run once, not per mode: it is the mesh's own.
 */
import { MESH_PARTS, type MeshReplica } from '@agent-platform/local/mesh';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { warningsOf } from '../e2e/harness/setup-distributed.js';
import { replicaSum } from '../support/replica-metrics.js';
import { account, describeRun, startLoad, startLoadedMesh, type LoadedMesh } from '../support/mesh-load.js';

/** Calls (gRPC) or requests other than probes (the gateway) a replica has served since it started, from its /metrics. */
function servedCalls(replica: MeshReplica): Promise<number> {
  const series = replica.part === 'gateway' ? 'http_server_request_duration_count' : 'rpc_server_call_duration_count';
  return replicaSum(replica, series, (line) => !line.includes('readyz') && !line.includes('grpc.health'));
}

let mesh: LoadedMesh;

beforeAll(async () => {
  mesh = await startLoadedMesh();
}, 240_000);

afterAll(async () => {
  await mesh?.close();
});

it('restarts every replica of every part, one at a time, under load, without a 5xx or a loss', async () => {
  const { platform, front, target } = mesh;
  const load = startLoad(target);
  const started = Date.now();
  const phases: string[] = [];
  // What the gateways warned of (a 5xx's cause), kept across their restarts: a new process prints anew.
  const gatewayWarnings: string[] = [];
  for (const part of MESH_PARTS) {
    for (const replica of platform.mesh.replicas.filter((candidate) => candidate.part === part)) {
      phases.push(`+${Date.now() - started} ms ${replica.name} stops`);
      const code = await replica.stop();
      if (part === 'gateway') gatewayWarnings.push(...warningsOf(replica));
      expect(code, `${replica.name} drained and exited cleanly`).toBe(0);
      await replica.start();
      // The sentinel that its callers are back on it before its sibling goes (what minReadySeconds
      // stands for on Kubernetes): it has served a call of the load.
      await expect.poll(() => servedCalls(replica), { timeout: 30_000, interval: 50 }).toBeGreaterThan(0);
    }
  }
  const report = await load.stop();
  const accounting = await account(target, report);
  console.log(describeRun('rolling restart of 10 replicas', report, accounting));
  gatewayWarnings.push(...platform.mesh.replicas.filter((replica) => replica.part === 'gateway').flatMap(warningsOf));
  expect(report.failures, [...phases, front.output(), ...gatewayWarnings].join('\n')).toEqual([]);
  expect(accounting).toEqual({ lost: { memory: 0, executions: 0, deliveries: 0 }, repeated: { executions: 0, deliveries: 0 }, resent: 0 });
  expect(report.executionIds.length).toBeGreaterThan(0);
}, 600_000);
