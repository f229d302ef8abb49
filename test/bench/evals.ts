/**
 * An eval of BENCH_EVAL_ITEMS items (default 500; issue 42's target: within 60 s on this machine)
 * on the offline model, through REST on the all-in-one platform: the dataset is added in batches,
 * the eval begins at concurrency 16 (its most), and the bench waits for `completed`, then reads
 * every result. Prints the wall time and items per second.
 * Run: node --conditions=agent-platform-source --import tsx test/bench/evals.ts
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../e2e/harness/processes.js';
import { recordFigure } from './figures.js';
import { QUICK } from './load.js';
import { dataOf, signIn, startPlatform, UNLIMITED } from './platform.js';

const ITEMS = Number(process.env.BENCH_EVAL_ITEMS ?? (QUICK ? 100 : 500));
const BATCH = 1_000;
const POLL_MS = 200;

const dataDir = await mkdtemp(join(tmpdir(), 'agent-platform-bench-evals-'));
const platform = await startPlatform({ dataDir, port: await freePort(), env: UNLIMITED });
try {
  const { client } = await signIn(platform.baseUrl);
  const agent = dataOf(await client.POST('/api/v1/agents', { body: { name: 'Examined', type: 'assistant', config: { memory_extraction: false } } }), 'creating an agent');
  const dataset = dataOf(await client.POST('/api/v1/datasets', { body: { name: 'Bench questions' } }), 'creating a dataset');
  const items = Array.from({ length: ITEMS }, (_, n) => ({ input: { message: `Question ${n}: what is ${n} plus ${n}?`, user_id: `user-${n % 13}` }, expected: `${n} plus ${n}` }));
  for (let start = 0; start < items.length; start += BATCH) {
    dataOf(await client.POST('/api/v1/datasets/{dataset_id}/items', { params: { path: { dataset_id: dataset.id } }, body: { items: items.slice(start, start + BATCH) } }), 'adding items');
  }

  const began = performance.now();
  const evaluation = dataOf(
    await client.POST('/api/v1/evals', {
      body: { dataset_id: dataset.id, agent_id: agent.id, scorers: [{ type: 'contains' }, { type: 'llm_judge', rubric: 'Restates the sum asked for.' }], concurrency: 16 },
    }),
    'beginning the eval',
  );
  // Polled as a client watching its progress would; each read is a few milliseconds.
  for (;;) {
    const read = dataOf(await client.GET('/api/v1/evals/{eval_id}', { params: { path: { eval_id: evaluation.id } } }), 'reading the eval');
    if (read.status === 'completed') break;
    await sleep(POLL_MS);
  }
  const seconds = (performance.now() - began) / 1_000;
  let read = 0;
  let cursor: string | undefined;
  do {
    const page = dataOf(await client.GET('/api/v1/evals/{eval_id}/results', { params: { path: { eval_id: evaluation.id }, query: { limit: 200, ...(cursor ? { cursor } : {}) } } }), 'reading results');
    read += page.items.filter((result) => result.state === 'scored').length;
    cursor = page.next_cursor ?? undefined;
  } while (cursor !== undefined);
  if (read !== ITEMS) throw new Error(`the eval scored ${read} of ${ITEMS} items`);
  console.log(`eval: ${ITEMS} items on the offline model, 2 scorers, concurrency 16: completed in ${seconds.toFixed(1)} s (${(ITEMS / seconds).toFixed(1)} items/s)`);
  recordFigure(`an eval of ${ITEMS} items on the offline model`, { value: Math.round(seconds * 10) / 10, unit: 's', better: 'lower', target: 60 });
} finally {
  await platform.stop();
  await rm(dataDir, { recursive: true, force: true });
}
