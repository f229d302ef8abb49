/**
 * Workflow executions as a customer drives them, on the all-in-one platform (`pnpm start`):
 * webhook → condition → http integration to a local receiver, triggered through the gateway's
 * `/hooks` at BENCH_WORKFLOW_CONNECTIONS connections for BENCH_WORKFLOW_SECONDS seconds. Prints
 * executions completed per second (every accepted one, counted after the drain), p50/p99 from
 * trigger to completion (the execution's duration_ms: accepted → finished), the accept latency the
 * sender saw, and memory. Every execution's history is kept (the default).
 * Run: pnpm bench   (prints figures, asserts nothing)
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { operations } from '@agent-platform/client';
import autocannon from 'autocannon';
import { freePort } from '../e2e/harness/processes.js';
import { dataOf, signIn, startPlatform } from './platform.js';
import { createReceiverWorkflow, percentile, startCountingReceiver } from './counting-receiver.js';
import { recordFigure } from './figures.js';
import { cpuSample, cpuSince, describeMemory, memoryByRole } from './process-memory.js';

const CONNECTIONS = Number(process.env.BENCH_WORKFLOW_CONNECTIONS ?? 50);
const SECONDS = Number(process.env.BENCH_WORKFLOW_SECONDS ?? 30);

async function main(): Promise<void> {
  const receiver = await startCountingReceiver();
  const receiverUrl = receiver.url;

  const dataDir = await mkdtemp(join(tmpdir(), 'agent-platform-bench-'));
  const platform = await startPlatform({
    dataDir,
    port: await freePort(),
    env: { ALLOW_PRIVATE_NETWORK_URLS: 'true', RATE_LIMITS: 'free:0/0,pro:0/0,enterprise:0/0' },
  });
  try {
    const { client } = await signIn(platform.baseUrl);
    const { workflowId, hookUrl } = await createReceiverWorkflow(client, platform.baseUrl, receiverUrl);
    const path = { workflow_id: workflowId };

    const publishedBefore = await eventsPublished(platform.baseUrl);
    const cpuBefore = cpuSample(platform.child.pid!);
    const started = Date.now();
    let sequence = 0;
    const result = await autocannon({
      url: hookUrl,
      method: 'POST',
      connections: CONNECTIONS,
      duration: SECONDS,
      headers: { 'content-type': 'application/json' },
      requests: [{ setupRequest: (request) => ({ ...request, body: JSON.stringify({ id: `o-${++sequence}`, amount: sequence % 200 }) }) }],
    });
    const accepted = result['2xx'];
    const loadMs = Date.now() - started;

    // The drain: until no execution of the workflow is running.
    const executions = async (query: operations['listWorkflowExecutions']['parameters']['query']) =>
      dataOf(await client.GET('/api/v1/workflows/{workflow_id}/executions', { params: { path, query } }), 'listing executions');
    const count = async (status: 'running' | 'completed' | 'failed') => (await executions({ status, limit: 1 })).total;
    while ((await count('running')) > 0) await new Promise((resolve) => setTimeout(resolve, 200));
    const drainedMs = Date.now() - started;
    const memory = memoryByRole(platform.child.pid!);
    const completed = await count('completed');
    const failed = await count('failed');

    const durations: number[] = [];
    for (let cursor: string | null = ''; cursor !== null; ) {
      const page = await executions({ limit: 100, ...(cursor ? { cursor } : {}) });
      for (const item of page.items) if (item.duration_ms !== null) durations.push(item.duration_ms);
      cursor = page.next_cursor;
    }
    durations.sort((a, b) => a - b);

    console.log(`workflow executions (webhook → condition → http), ${CONNECTIONS} connections for ${SECONDS} s through /hooks:`);
    console.log(`  accepted ${accepted} (non-2xx ${result.non2xx}, errors ${result.errors}); completed ${completed}, failed ${failed}; receiver got ${receiver.received()}`);
    if (failed > 0) {
      const reasons = Map.groupBy((await executions({ status: 'failed', limit: 100 })).items, (item) => `${item.error?.node_id}: ${item.error?.message}`);
      for (const [reason, items] of reasons) console.log(`  failed (${items.length} of the first 100): ${reason}`);
    }
    console.log(`  completed per second, load start → drained: ${Math.round((completed / drainedMs) * 1000)} (load ${Math.round(loadMs / 1000)} s, drained after ${Math.round(drainedMs / 1000)} s)`);
    recordFigure('workflow executions completed per second', { value: (completed / drainedMs) * 1000, unit: '/s', better: 'higher', target: 1_500 });
    console.log(`  trigger → completion (duration_ms): p50 ${percentile(durations, 50)} ms, p99 ${percentile(durations, 99)} ms, max ${durations.at(-1)} ms`);
    console.log(`  accept latency at the sender: p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms`);
    console.log(`  memory after the drain: ${describeMemory(memory)}`);

    // Each execution records two events (started, then completed or failed) in the runner's
    // outbox; the relay publishes them in order, a run of rows at a time, and may fall behind.
    const events = 2 * (completed + failed);
    const eventsDeadline = Date.now() + 10 * 60_000;
    while ((await eventsPublished(platform.baseUrl)) - publishedBefore < events && Date.now() < eventsDeadline) await new Promise((resolve) => setTimeout(resolve, 200));
    const publishedMs = Date.now() - started;
    console.log(
      `  their ${events} events all published ${Math.round(publishedMs / 1000)} s after the load started: ${Math.round((events / publishedMs) * 1000)}/s (the outbox relays, a run of rows at a time)`,
    );
    recordFigure('workflow events published per second', { value: (events / publishedMs) * 1000, unit: '/s', better: 'higher' });
    // Until every event is out: the work the relays deferred counts too.
    const cpu = cpuSince(cpuBefore, platform.child.pid!);
    const cpuPerExecution = (role: string) => ((cpu.get(role) ?? 0) * 1000) / (completed + failed);
    console.log(`  CPU per execution, events published included: platform ${Math.round(cpuPerExecution('platform'))} µs, PostgreSQL ${Math.round(cpuPerExecution('postgres'))} µs`);
    recordFigure('CPU per workflow execution, platform process', { value: cpuPerExecution('platform'), unit: 'µs', better: 'lower' });
  } finally {
    await platform.stop();
    receiver.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** Events every outbox relay of the platform has published so far (the count of `outbox.publish.lag`, from /metrics). */
async function eventsPublished(baseUrl: string): Promise<number> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith('outbox_publish_lag_count'))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

await main();
