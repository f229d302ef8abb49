import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { startTestNatsServer, type TestNatsServer } from '@agent-platform/kit/testing';
import { MESH_PARTS, startMesh, type Mesh, type MeshPart, type MeshReplica, type ServiceName } from '@agent-platform/local/mesh';
import { buildServices, COMMON_ENV, loggedErrors, PINO_WARN } from './processes.js';
import { startSmtpPeer } from '@agent-platform/workflow-runner/testing';

export const ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** The e2e suites' distributed mode: the platform below, its address provided to the tests. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const platform = await startDistributedPlatform();
  project.provide('baseUrl', platform.baseUrl);
  project.provide('mode', 'distributed');
  project.provide('mailDir', platform.mailDir);
  return () => platform.stop();
}

export interface DistributedPlatform {
  baseUrl: string;
  /** Where the SMTP peer the workflow-runner sends to keeps the mail. */
  mailDir: string;
  /** The first replica's Prometheus endpoint, by part (`gateway`, `agent-memory`, …). */
  metricsUrls: Record<string, string>;
  /** Every replica, to stop, kill and start again (the mesh's fault suites). */
  mesh: Mesh;
  /** The run's own NATS server, to restart. */
  nats: TestNatsServer;
  stop(): Promise<void>;
}

export interface DistributedPlatformOptions {
  /** Added to every process's environment (the benchmarks lift the rate limits). */
  env?: Record<string, string>;
  /** Replicas per part; one each when absent. */
  replicas?: Partial<Record<MeshPart, number>>;
  /** The PostgreSQL server the databases are made on (a suite's own, to restart it); ADMIN_URL's by default. */
  adminUrl?: string;
}

/**
 * The mesh `pnpm start:mesh` runs (deploy/local's `startMesh`): each part as its own process,
 * compiled as its image runs it, each service on its own database of the real PostgreSQL, events
 * over a real NATS JetStream server of this run's own, rate limits in the real Redis, gRPC over
 * loopback.
 */
export async function startDistributedPlatform(options: DistributedPlatformOptions = {}): Promise<DistributedPlatform> {
  buildServices();
  const run = `${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const databases: Record<ServiceName, string> = { identity: `e2e_identity_${run}`, agents: `e2e_agents_${run}`, webhooks: `e2e_webhooks_${run}`, workflows: `e2e_workflows_${run}` };
  const adminUrl = options.adminUrl ?? ADMIN_URL;
  for (const name of Object.values(databases)) await admin(adminUrl, (client) => client.query(`CREATE DATABASE ${name}`));
  const urlOf = (name: string) => Object.assign(new URL(adminUrl), { pathname: `/${name}` }).toString();
  const nats = await startTestNatsServer();
  const smtp = await startSmtpPeer();
  let mesh: Mesh | undefined;
  const teardown = async () => {
    await mesh?.stop();
    if (mesh) reportLoggedErrors(mesh);
    await nats.dispose();
    await smtp.close();
    for (const name of Object.values(databases)) await admin(adminUrl, (client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  };
  try {
    mesh = await startMesh({
      replicas: Object.fromEntries(MESH_PARTS.map((part) => [part, options.replicas?.[part] ?? 1])) as Record<MeshPart, number>,
      databaseUrls: Object.fromEntries(Object.entries(databases).map(([service, name]) => [service, urlOf(name)])) as Record<ServiceName, string>,
      natsUrl: nats.url,
      redisUrl: REDIS_URL,
      port: 0,
      secrets: { jwtKeyEncryptionKey: aesKey(), toolSecretKey: aesKey(), webhookSecretKey: aesKey() },
      // decisions §18.1: the suites chat with the deterministic offline model and buy credits
      // through the built-in provider, as they say.
      env: { ...COMMON_ENV, ALLOW_OFFLINE_MODEL: 'true', PAYMENT_PROVIDER: 'immediate', ...options.env },
      partEnv: { 'workflow-runner': smtp.env },
    });
    const metricsUrls = Object.fromEntries(MESH_PARTS.map((part) => [part, `http://127.0.0.1:${mesh!.replicas.find((replica) => replica.part === part)!.ports.metrics}/metrics`]));
    return { baseUrl: mesh.url, mailDir: smtp.mailDir, metricsUrls, mesh, nats, stop: teardown };
  } catch (error) {
    await teardown();
    throw error;
  }
}

const aesKey = () => randomBytes(32).toString('base64');

/**
 * What the processes logged at error level, and the warnings of requests answered 5xx (each with
 * its request id, which a failed expectation names), on stderr: a CI run whose every signup
 * answered 500, and one whose login once answered 503, printed nothing else to tell why, since
 * the body of a 5xx hides the cause by design.
 */
function reportLoggedErrors(mesh: Mesh): void {
  for (const replica of mesh.replicas) {
    const output = replica.process.output();
    const errors = loggedErrors(output);
    if (errors.length > 0) console.error(`${replica.name} logged errors:\n${errors.join('\n')}`);
    const failedRequests = loggedErrors(output, 20, PINO_WARN).filter((line) => !errors.includes(line) && line.includes('"request_id"'));
    if (failedRequests.length > 0) console.error(`${replica.name} warned of requests:\n${failedRequests.join('\n')}`);
  }
}

/**
 * What a replica's current process logged at warn level or above, each line named by the replica:
 * a 503's body hides its cause by design, and the gateway's warning names the status behind it.
 */
export function warningsOf(replica: MeshReplica): string[] {
  return loggedErrors(replica.process.output(), 20, PINO_WARN).map((line) => `${replica.name}: ${line}`);
}

async function admin<T>(url: string, run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}
