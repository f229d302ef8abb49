/**
 * decisions §16: a background run survives a kill -9 of the all-in-one process, and so does an
 * eval. An eval and runs with a slow tool are queued, the process is SIGKILLed while some run and
 * more wait, and the platform is started again on the same data: every run ends (completed, or
 * failed saying why), none is lost, none is charged twice, no tool call runs twice, and the eval
 * completes with every item scored once.
 */
import { startReceiver } from '@agent-platform/kit/testing';
import { createClient, type Run } from '@agent-platform/client';
import { expect, it } from 'vitest';
import { deferredCleanups, temporaryDirectory } from './support/cleanups.js';
import { startLocalPlatformProcess, type LocalPlatformProcess } from '../e2e/harness/processes.js';
import { dataOf, signIn, UNLIMITED, type BenchUser } from '../bench/platform.js';

const defer = deferredCleanups();
const RUNS = 12;
const EVAL_ITEMS = 8;
// The test polls the API; the free plan's rate limit is not what it tests.
const ENV = { ...UNLIMITED, ALLOW_PRIVATE_NETWORK_URLS: 'true', LOG_LEVEL: 'warn' };

/** The agent's runs: background ones, or (`eval`) its eval's. */
async function runsOf(user: BenchUser, agentId: string, trigger: 'background' | 'eval' = 'background'): Promise<Run[]> {
  const page = dataOf(await user.client.GET('/api/v1/agents/{agent_id}/runs', { params: { path: { agent_id: agentId }, query: { limit: 100, trigger } } }), 'listing runs');
  return page.items;
}

/** The launcher and everything in its process group at once, as the kernel's OOM killer would; then its PostgreSQL. */
async function killHard(platform: LocalPlatformProcess): Promise<void> {
  process.kill(-platform.child.pid!, 'SIGKILL');
  // stop() finds the launcher gone and kills the PostgreSQL it left, as a machine's loss would.
  await platform.stop(0);
}

it('queued and running background runs all end after a kill -9 and a restart: none lost, none charged twice, no tool call run twice', { timeout: 240_000 }, async () => {
  const dataDir = await temporaryDirectory('agent-platform-runs-crash-', defer);
  // Each call takes a while: runs are mid-tool when the process dies.
  const tool = await startReceiver({ delayMs: 400, json: { stock: 3 } });
  defer(() => tool.close());
  const first = await startLocalPlatformProcess({ dataDir, env: ENV });
  defer(() => first.stop());
  const user = await signIn(first.baseUrl);
  const created = dataOf(
    await user.client.POST('/api/v1/tools', {
      body: { name: 'check_stock', description: 'Stock of an item', type: 'http', config: { url: tool.url('/stock') }, input_schema: { type: 'object', properties: { n: { type: 'integer' } } } },
    }),
    'creating the tool',
  );
  const agent = dataOf(await user.client.POST('/api/v1/agents', { body: { name: 'Worker', type: 'assistant', tools: [created.id], config: { memory_extraction: false } } }), 'creating the agent');
  const balanceBefore = dataOf(await user.client.GET('/api/v1/billing/credits'), 'balance').balance;
  const started: string[] = [];
  for (let n = 0; n < RUNS; n += 1) {
    const queued = await user.client.POST('/api/v1/agents/{agent_id}/runs', { params: { path: { agent_id: agent.id } }, body: { message: `Please check_stock {"n": ${n}}` } });
    expect(queued.response.status).toBe(202);
    started.push(queued.data!.id);
  }
  // Begun after them, the eval's items wait behind them at the kill (the workers take runs in
  // order); they call the tool too, two at a time, with n from 100: a call run twice shows.
  const dataset = dataOf(await user.client.POST('/api/v1/datasets', { body: { name: 'Stock questions' } }), 'creating the dataset');
  const items = Array.from({ length: EVAL_ITEMS }, (_, index) => ({ input: { message: `Please check_stock {"n": ${100 + index}}` }, expected: 'stock' }));
  dataOf(await user.client.POST('/api/v1/datasets/{dataset_id}/items', { params: { path: { dataset_id: dataset.id } }, body: { items } }), 'adding the items');
  const evaluation = dataOf(
    await user.client.POST('/api/v1/evals', { body: { dataset_id: dataset.id, agent_id: agent.id, scorers: [{ type: 'contains' }], concurrency: 2 } }),
    'beginning the eval',
  );
  // The sentinel: some runs are past their tool call (completed), others are in it or waiting.
  await expect.poll(async () => (await runsOf(user, agent.id)).filter((run) => run.status === 'completed').length, { timeout: 60_000, interval: 100 }).toBeGreaterThanOrEqual(2);
  const atKill = await runsOf(user, agent.id);
  const evalAtKill = dataOf(await user.client.GET('/api/v1/evals/{eval_id}', { params: { path: { eval_id: evaluation.id } } }), 'reading the eval').progress;
  await killHard(first);

  const second = await startLocalPlatformProcess({ dataDir, env: ENV });
  defer(() => second.stop());
  const again: BenchUser = { ...user, client: createClient({ baseUrl: second.baseUrl, accessToken: user.accessToken }) };
  await expect.poll(async () => (await runsOf(again, agent.id)).every((run) => run.status === 'completed' || run.status === 'failed'), { timeout: 120_000, interval: 250 }).toBe(true);
  const ended = await runsOf(again, agent.id);
  const evalDone = async () => dataOf(await again.client.GET('/api/v1/evals/{eval_id}', { params: { path: { eval_id: evaluation.id } } }), 'reading the eval');
  await expect.poll(async () => (await evalDone()).status, { timeout: 120_000, interval: 250 }).toBe('completed');
  const evalRuns = await runsOf(again, agent.id, 'eval');
  const results = dataOf(await again.client.GET('/api/v1/evals/{eval_id}/results', { params: { path: { eval_id: evaluation.id }, query: { limit: 100 } } }), 'reading the results').items;

  const completed = ended.filter((run) => run.status === 'completed');
  const failed = ended.filter((run) => run.status === 'failed');
  const lost = started.filter((id) => !ended.some((run) => run.id === id && (run.status === 'completed' || run.status === 'failed')));
  const charged = [...completed, ...evalRuns].reduce((sum, run) => sum + run.credits, 0);
  const debitedNow = async () => balanceBefore - dataOf(await again.client.GET('/api/v1/billing/credits'), 'balance').balance;
  // A turn is charged just after it is stored; one stored just before the kill lost its charge
  // with the process, and the sweep of rounds left uncharged (every 30 s, of rounds 15 s old)
  // takes it on the restarted platform.
  await expect.poll(debitedNow, { timeout: 90_000, interval: 500 }).toBeGreaterThanOrEqual(charged);
  const debited = await debitedNow();
  // Each run asks the tool for its own n: a call run twice shows as an n received twice.
  const calls = new Map<number, number>();
  for (const request of tool.received('/stock')) {
    const n = (request.json as { n: number }).n;
    calls.set(n, (calls.get(n) ?? 0) + 1);
  }
  const callsTwice = [...calls.values()].filter((count) => count > 1).length;
  console.log(
    `background runs across a kill -9 of the all-in-one process: started ${RUNS} (at the kill: ${atKill.filter((run) => run.status === 'completed').length} completed, ` +
      `${atKill.filter((run) => run.status === 'running').length} running, ${atKill.filter((run) => run.status === 'queued').length} queued); ` +
      `completed ${completed.length}, failed with a reason ${failed.length}, lost ${lost.length}, charged twice ${Math.max(0, debited - charged)} credits, left uncharged ${Math.max(0, charged - debited)}, tool calls run twice ${callsTwice}; ` +
      `eval of ${EVAL_ITEMS} items (at the kill: ${evalAtKill.scored} scored, ${evalAtKill.running} running, ${evalAtKill.pending} pending): scored ${results.filter((result) => result.state === 'scored').length} (runs completed ${results.filter((result) => result.run_status === 'completed').length}, failed with a reason ${results.filter((result) => result.run_status === 'failed').length}), runs ${evalRuns.length}`,
  );
  // Every item scored once, on its one run, whatever became of that run.
  expect(results.map((result) => result.state)).toEqual(Array.from({ length: EVAL_ITEMS }, () => 'scored'));
  expect(new Set(results.map((result) => result.run_id)).size).toBe(EVAL_ITEMS);
  expect(evalRuns.map((run) => run.id).toSorted()).toEqual(results.map((result) => result.run_id).toSorted());
  for (const result of results) expect(['completed', 'failed']).toContain(result.run_status);
  expect(lost).toEqual([]);
  expect(completed.length + failed.length).toBe(RUNS);
  for (const run of failed) expect(run.error).toEqual({ code: 'service_unavailable', message: expect.stringContaining('no call runs twice') });
  // Only completed runs were stored, so only they were charged, each once.
  expect(debited).toBe(charged);
  expect(callsTwice).toBe(0);
  // Runs that were only queued at the kill completed.
  for (const run of atKill.filter((one) => one.status === 'queued')) expect(ended.find((one) => one.id === run.id)?.status).toBe('completed');
});
