import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { startTestNatsServer } from '@agent-platform/kit/testing';
import { buildServices, COMMON_ENV, freePort, httpOk, loggedErrors, startCompiledService, waitUntil, type RunningProcess } from './processes.js';
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
  /** Each process's Prometheus endpoint, by service. */
  metricsUrls: Record<string, string>;
  stop(): Promise<void>;
}

/**
 * Each service as its own process, compiled as its image runs it, each on its own database of the
 * real PostgreSQL, events over a real NATS JetStream server of this run's own, rate limits in the
 * real Redis, gRPC over loopback.
 * `env` is added to every process's environment (the benchmarks lift the rate limits).
 */
export async function startDistributedPlatform(env: Record<string, string> = {}): Promise<DistributedPlatform> {
  buildServices();
  const common = { ...COMMON_ENV, ...env };
  const run = `${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const databases = { identity: `e2e_identity_${run}`, agents: `e2e_agents_${run}`, webhooks: `e2e_webhooks_${run}`, workflows: `e2e_workflows_${run}` };
  for (const name of Object.values(databases)) await admin((client) => client.query(`CREATE DATABASE ${name}`));
  const urlOf = (name: string) => Object.assign(new URL(ADMIN_URL), { pathname: `/${name}` }).toString();
  const nats = await startTestNatsServer();
  const smtp = await startSmtpPeer();
  const processes: RunningProcess[] = [];
  const teardown = async () => {
    for (const running of processes.reverse()) await running.stop();
    reportLoggedErrors(processes);
    await nats.dispose();
    await smtp.close();
    for (const name of Object.values(databases)) await admin((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  };

  // Every process serves /metrics on a port of its own (the default 9464 would be shared).
  const metricsPorts = { identity: await freePort(), agentMemory: await freePort(), webhookDispatcher: await freePort(), workflowRunner: await freePort(), gateway: await freePort() };
  const metricsUrls = Object.fromEntries(Object.entries(metricsPorts).map(([name, port]) => [name, `http://127.0.0.1:${port}/metrics`]));
  try {
    const identityPort = await freePort();
    processes.push(
      startCompiledService('services/identity', {
        ...common,
        METRICS_PORT: String(metricsPorts.identity),
        DATABASE_URL: urlOf(databases.identity),
        GRPC_HOST: '127.0.0.1',
        GRPC_PORT: String(identityPort),
        NATS_URL: nats.url,
        JWT_KEY_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
        // decisions §18: the suites buy credits through the built-in provider, as they say.
        PAYMENT_PROVIDER: 'immediate',
      }),
    );
    const agentMemoryPort = await freePort();
    // agent-memory and workflow-runner call each other: both addresses are known before either starts.
    const runnerPort = await freePort();
    processes.push(
      startCompiledService('services/agent-memory', {
        ...common,
        METRICS_PORT: String(metricsPorts.agentMemory),
        DATABASE_URL: urlOf(databases.agents),
        GRPC_HOST: '127.0.0.1',
        GRPC_PORT: String(agentMemoryPort),
        IDENTITY_ADDR: `127.0.0.1:${identityPort}`,
        WORKFLOW_RUNNER_ADDR: `127.0.0.1:${runnerPort}`,
        TOOL_SECRET_KEY: randomBytes(32).toString('base64'),
        NATS_URL: nats.url,
        // decisions §18: the suites chat with the deterministic offline model, as they say.
        ALLOW_OFFLINE_MODEL: 'true',
      }),
    );
    const dispatcherPort = await freePort();
    processes.push(
      startCompiledService('services/webhook-dispatcher', {
        ...common,
        METRICS_PORT: String(metricsPorts.webhookDispatcher),
        DATABASE_URL: urlOf(databases.webhooks),
        GRPC_HOST: '127.0.0.1',
        GRPC_PORT: String(dispatcherPort),
        NATS_URL: nats.url,
        WEBHOOK_SECRET_KEY: randomBytes(32).toString('base64'),
      }),
    );
    const ingressPort = await freePort();
    processes.push(
      startCompiledService('services/workflow-runner', {
        ...common,
        METRICS_PORT: String(metricsPorts.workflowRunner),
        DATABASE_URL: urlOf(databases.workflows),
        GRPC_HOST: '127.0.0.1',
        GRPC_PORT: String(runnerPort),
        INGRESS_HOST: '127.0.0.1',
        INGRESS_PORT: String(ingressPort),
        AGENT_MEMORY_ADDR: `127.0.0.1:${agentMemoryPort}`,
        NATS_URL: nats.url,
        ...smtp.env,
      }),
    );
    const port = await freePort();
    const gateway = startCompiledService('gateway', {
      ...common,
      METRICS_PORT: String(metricsPorts.gateway),
      HOST: '127.0.0.1',
      PORT: String(port),
      IDENTITY_ADDR: `127.0.0.1:${identityPort}`,
      AGENT_MEMORY_ADDR: `127.0.0.1:${agentMemoryPort}`,
      WEBHOOK_DISPATCHER_ADDR: `127.0.0.1:${dispatcherPort}`,
      WORKFLOW_RUNNER_ADDR: `127.0.0.1:${runnerPort}`,
      WORKFLOW_INGRESS_URL: `http://127.0.0.1:${ingressPort}`,
      WEBHOOK_HOST: `http://127.0.0.1:${port}/hooks`,
      REDIS_URL,
    });
    processes.push(gateway);

    const baseUrl = `http://127.0.0.1:${port}`;
    await waitUntil('the gateway and every service', gateway, () => httpOk(`${baseUrl}/readyz`), 120_000);
    return { baseUrl, mailDir: smtp.mailDir, metricsUrls, stop: teardown };
  } catch (error) {
    await teardown();
    throw error;
  }
}

/**
 * What the processes logged at error level, on stderr: a CI run whose every signup answered 500
 * printed nothing else to tell why, since the body of a 500 hides the cause by design.
 */
function reportLoggedErrors(processes: RunningProcess[]): void {
  for (const running of processes) {
    const errors = loggedErrors(running);
    if (errors.length > 0) console.error(`${running.child.spawnargs.at(-1) ?? 'a process'} logged errors:\n${errors.join('\n')}`);
  }
}

async function admin<T>(run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}
