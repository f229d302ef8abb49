/**
 * Executions parked on approval nodes, as a customer drives them on the all-in-one platform
 * (`pnpm start`): webhook → approval → http integration to a local receiver. BENCH_APPROVALS
 * executions (default 10,000) are triggered through `/hooks` at 50 connections and park
 * `waiting`; the platform's RSS is read with a tenth of them waiting and with all of them (the
 * target: flat, as a waiting execution is a row, not something held in memory). Then every one is
 * approved through REST at 50 connections: approvals per second, and from approval to completion
 * (node decided_at → execution completed_at) p50/p99.
 * Run: pnpm bench   (prints figures, asserts nothing)
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Execution } from '@agent-platform/client';
import autocannon from 'autocannon';
import { freePort } from '../e2e/harness/processes.js';
import { percentile, startCountingReceiver } from './counting-receiver.js';
import { recordFigure } from './figures.js';
import { QUICK } from './load.js';
import { dataOf, signIn, startPlatform } from './platform.js';
import { memoryByRole } from './process-memory.js';

const CONNECTIONS = 50;
const PARKED = Number(process.env.BENCH_APPROVALS ?? (QUICK ? 2_000 : 10_000));

const mib = (kib: number | undefined) => (kib ?? 0) / 1024;

/** Runs `work` over `items`, `concurrency` at a time. */
async function pool<T>(items: readonly T[], concurrency: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) await work(items[next++]!);
    }),
  );
}

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
    const { client, accessToken } = await signIn(platform.baseUrl);
    const workflow = dataOf(
      await client.POST('/api/v1/workflows', {
        body: {
          name: 'approvals bench',
          nodes: [
            { id: 'in', type: 'webhook', config: { path: '/refunds' } },
            { id: 'check', type: 'approval', config: { message: 'Refund {{ input.id }}?' } },
            { id: 'pay', type: 'integration', config: { service: 'http', url: `${receiverUrl}/pay`, body: { id: '{{ input.id }}' } } },
          ],
          edges: [
            { source: 'in', target: 'check' },
            { source: 'check', target: 'pay' },
          ],
        },
      }),
      'creating the workflow',
    );
    const path = { workflow_id: workflow.id };
    dataOf(await client.POST('/api/v1/workflows/{workflow_id}/resume', { params: { path } }), 'activating the workflow');
    const hookUrl = `${platform.baseUrl}${new URL(workflow.webhook_url).pathname}`;
    const count = async (status: 'running' | 'waiting' | 'completed' | 'failed') =>
      dataOf(await client.GET('/api/v1/workflows/{workflow_id}/executions', { params: { path, query: { status, limit: 1 } } }), 'counting executions').total;

    let sequence = 0;
    /** Triggers `amount` executions and waits until every one is parked. */
    const park = async (amount: number) => {
      const result = await autocannon({
        url: hookUrl,
        method: 'POST',
        connections: Math.min(CONNECTIONS, amount),
        amount,
        headers: { 'content-type': 'application/json' },
        requests: [{ setupRequest: (request) => ({ ...request, body: JSON.stringify({ id: `r-${++sequence}` }) }) }],
      });
      if (result['2xx'] !== amount) throw new Error(`triggering: ${result['2xx']} of ${amount} accepted (non-2xx ${result.non2xx}, errors ${result.errors})`);
      while ((await count('running')) > 0) await new Promise((resolve) => setTimeout(resolve, 200));
    };
    const platformRss = () => mib(memoryByRole(platform.child.pid!).get('platform')?.rss);

    const parkStarted = Date.now();
    await park(PARKED / 10);
    const rssAtTenth = platformRss();
    await park(PARKED - PARKED / 10);
    const parkMs = Date.now() - parkStarted;
    const rssAtAll = platformRss();
    const waiting = await count('waiting');

    const ids: string[] = [];
    for (let cursor: string | null = ''; cursor !== null; ) {
      const page: { items: { id: string }[]; next_cursor: string | null } = dataOf(await client.GET('/api/v1/workflows/{workflow_id}/executions', { params: { path, query: { status: 'waiting', limit: 100, ...(cursor ? { cursor } : {}) } } }), 'listing');
      ids.push(...page.items.map((item) => item.id));
      cursor = page.next_cursor;
    }
    let next = 0;
    const approveStarted = Date.now();
    const approvals = await autocannon({
      url: platform.baseUrl,
      method: 'POST',
      connections: Math.min(CONNECTIONS, ids.length),
      amount: ids.length,
      headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' },
      requests: [{ setupRequest: (request) => ({ ...request, path: `/api/v1/workflows/${workflow.id}/executions/${ids[next++]}/nodes/check/approve`, body: '{"comment":"ok"}' }) }],
    });
    const approveMs = Date.now() - approveStarted;
    while ((await count('waiting')) + (await count('running')) > 0) await new Promise((resolve) => setTimeout(resolve, 200));
    const drainedMs = Date.now() - approveStarted;
    const completed = await count('completed');

    const approvalToEnd: number[] = [];
    await pool(ids, CONNECTIONS, async (id) => {
      const execution: Execution = dataOf(await client.GET('/api/v1/workflows/{workflow_id}/executions/{execution_id}', { params: { path: { ...path, execution_id: id } } }), 'reading');
      const decided = execution.node_executions.find((node) => node.node_id === 'check')?.completed_at;
      if (decided && execution.completed_at) approvalToEnd.push(Date.parse(execution.completed_at) - Date.parse(decided));
    });
    approvalToEnd.sort((a, b) => a - b);

    console.log(`workflow approvals (webhook → approval → http): ${PARKED} executions parked, then approved at ${CONNECTIONS} connections:`);
    console.log(`  parked ${waiting} waiting in ${Math.round(parkMs / 1000)} s (${Math.round((PARKED / parkMs) * 1000)}/s triggered and parked)`);
    console.log(`  platform RSS with ${PARKED / 10} waiting ${Math.round(rssAtTenth)} MiB, with ${PARKED} waiting ${Math.round(rssAtAll)} MiB (×${(rssAtAll / rssAtTenth).toFixed(2)})`);
    recordFigure(`platform RSS with ${PARKED} executions waiting ÷ with ${PARKED / 10}`, { value: rssAtAll / rssAtTenth, unit: '', better: 'lower' });
    console.log(`  approvals: ${approvals['2xx']} answered 200 (non-2xx ${approvals.non2xx}, errors ${approvals.errors}), ${Math.round((ids.length / approveMs) * 1000)}/s; p50 ${approvals.latency.p50} ms, p99 ${approvals.latency.p99} ms`);
    recordFigure('workflow approvals per second', { value: (ids.length / approveMs) * 1000, unit: '/s', better: 'higher' });
    console.log(`  completed ${completed} (receiver got ${receiver.received()}); first approval → all drained ${Math.round(drainedMs / 1000)} s`);
    console.log(`  approval → completion: p50 ${percentile(approvalToEnd, 50)} ms, p99 ${percentile(approvalToEnd, 99)} ms, max ${approvalToEnd.at(-1)} ms`);
    recordFigure('workflow approval → completion p50', { value: percentile(approvalToEnd, 50), unit: 'ms', better: 'lower' });
  } finally {
    await platform.stop();
    receiver.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

await main();
