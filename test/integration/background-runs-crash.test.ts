/**
 * decisions §16: a background run survives a kill -9 of the all-in-one process, and so does an
 * eval. An eval and runs with a slow tool are queued, the process is SIGKILLed while some run and
 * more wait, and the platform is started again on the same data: every run ends (completed, or
 * failed saying why), none is lost, none is charged twice, no tool call runs twice, and the eval
 * completes with every item scored once.
 */
import { createClient } from '@agent-platform/client';
import { expect, it } from 'vitest';
import { deferredCleanups, temporaryDirectory } from './support/cleanups.js';
import { startLocalPlatformProcess, type LocalPlatformProcess } from '../e2e/harness/processes.js';
import { dataOf, signIn, UNLIMITED } from '../bench/platform.js';
import { accountRuns, armAgent, describeRuns, expectNothingLost, queueRuns, runsOf, stockMessage } from '../support/background-runs.js';

const defer = deferredCleanups();
const RUNS = 12;
const EVAL_ITEMS = 8;
// The test polls the API; the free plan's rate limit is not what it tests.
const ENV = { ...UNLIMITED, ALLOW_PRIVATE_NETWORK_URLS: 'true', LOG_LEVEL: 'warn' };

/** The launcher and everything in its process group at once, as the kernel's OOM killer would; then its PostgreSQL. */
async function killHard(platform: LocalPlatformProcess): Promise<void> {
  process.kill(-platform.child.pid!, 'SIGKILL');
  // stop() finds the launcher gone and kills the PostgreSQL it left, as a machine's loss would.
  await platform.stop(0);
}

it('queued and running background runs all end after a kill -9 and a restart: none lost, none charged twice, no tool call run twice', { timeout: 240_000 }, async () => {
  const dataDir = await temporaryDirectory('agent-platform-runs-crash-', defer);
  const first = await startLocalPlatformProcess({ dataDir, env: ENV });
  defer(() => first.stop());
  const user = await signIn(first.baseUrl);
  // Each call takes a while: runs are mid-tool when the process dies.
  const armed = await armAgent(user.client);
  defer(() => armed.tool.close());
  const started = await queueRuns(user.client, armed.agentId, RUNS);
  // Begun after them, the eval's items wait behind them at the kill (the workers take runs in
  // order); they call the tool too, two at a time, with n from 100: a call run twice shows.
  const dataset = dataOf(await user.client.POST('/api/v1/datasets', { body: { name: 'Stock questions' } }), 'creating the dataset');
  const items = Array.from({ length: EVAL_ITEMS }, (_, index) => ({ input: { message: stockMessage(100 + index) }, expected: 'stock' }));
  dataOf(await user.client.POST('/api/v1/datasets/{dataset_id}/items', { params: { path: { dataset_id: dataset.id } }, body: { items } }), 'adding the items');
  const evaluation = dataOf(
    await user.client.POST('/api/v1/evals', { body: { dataset_id: dataset.id, agent_id: armed.agentId, scorers: [{ type: 'contains' }], concurrency: 2 } }),
    'beginning the eval',
  );
  // The sentinel: some runs are past their tool call (completed), others are in it or waiting.
  await expect.poll(async () => (await runsOf(user.client, armed.agentId)).filter((run) => run.status === 'completed').length, { timeout: 60_000, interval: 100 }).toBeGreaterThanOrEqual(2);
  const atKill = await runsOf(user.client, armed.agentId);
  const evalAtKill = dataOf(await user.client.GET('/api/v1/evals/{eval_id}', { params: { path: { eval_id: evaluation.id } } }), 'reading the eval').progress;
  await killHard(first);

  const second = await startLocalPlatformProcess({ dataDir, env: ENV });
  defer(() => second.stop());
  const again = createClient({ baseUrl: second.baseUrl, accessToken: user.accessToken });
  await expect.poll(async () => dataOf(await again.GET('/api/v1/evals/{eval_id}', { params: { path: { eval_id: evaluation.id } } }), 'reading the eval').status, { timeout: 120_000, interval: 250 }).toBe('completed');
  const evalRuns = await runsOf(again, armed.agentId, 'eval');
  const results = dataOf(await again.GET('/api/v1/evals/{eval_id}/results', { params: { path: { eval_id: evaluation.id }, query: { limit: 100 } } }), 'reading the results').items;
  // The eval's runs are charged as turns: the debits must cover them too.
  const runs = await accountRuns(again, armed, started, evalRuns);
  const count = (status: string) => atKill.filter((run) => run.status === status).length;
  const scoredWith = (status: string) => results.filter((result) => result.run_status === status).length;
  console.log(
    `background runs across a kill -9 of the all-in-one process: started ${RUNS} (at the kill: ${count('completed')} completed, ${count('running')} running, ${count('queued')} queued); ${describeRuns(runs)}; ` +
      `eval of ${EVAL_ITEMS} items (at the kill: ${evalAtKill.scored} scored, ${evalAtKill.running} running, ${evalAtKill.pending} pending): scored ${results.filter((result) => result.state === 'scored').length} (runs completed ${scoredWith('completed')}, failed with a reason ${scoredWith('failed')}), runs ${evalRuns.length}`,
  );
  expectNothingLost(runs, RUNS);
  // A run failed only because a round of it had asked for tool calls before the kill (a snapshot
  // taken before the kill cannot say which were only queued: a worker may claim one in between).
  for (const run of runs.failed) {
    const steps = dataOf(await again.GET('/api/v1/runs/{run_id}', { params: { path: { run_id: run.id } } }), 'reading a failed run').steps;
    expect(steps.some((step) => step.type === 'model' && step.tool_calls.length > 0), run.id).toBe(true);
  }
  // Every item scored once, on its one run, whatever became of that run.
  expect(results.map((result) => result.state)).toEqual(Array.from({ length: EVAL_ITEMS }, () => 'scored'));
  expect(new Set(results.map((result) => result.run_id)).size).toBe(EVAL_ITEMS);
  expect(evalRuns.map((run) => run.id).toSorted()).toEqual(results.map((result) => result.run_id).toSorted());
  for (const result of results) expect(['completed', 'failed']).toContain(result.run_status);
});
