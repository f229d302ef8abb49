import { startReceiver, type Receiver } from '@agent-platform/kit/testing';
import type { AgentPlatformClient, Eval, EvalResult } from '@agent-platform/client';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Api, ISO_MS, id, newAccount } from './harness/client.js';
import { ofTenant, verifyDelivery } from './harness/deliveries.js';
import { expectStatus, statusOf } from './harness/results.js';

/** decisions §16 through REST: an agent run on a dataset's items, scored, summed and compared. */

let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(() => receiver.close());

const ITEMS = [
  { input: { message: 'Is the Eiffel Tower in Paris?' }, expected: 'Eiffel Tower' },
  { input: { message: 'Say hello', user_id: 'customer-9' }, expected: 'goodbye' },
  { input: { message: 'What colour is the sky?' }, expected: 'colour' },
];

async function createAgent(client: AgentPlatformClient): Promise<string> {
  return expectStatus(await client.POST('/api/v1/agents', { body: { name: 'Judged', type: 'assistant', config: { memory_extraction: false } } }), 201).id;
}

async function createDataset(client: AgentPlatformClient, items: typeof ITEMS): Promise<string> {
  const dataset = expectStatus(await client.POST('/api/v1/datasets', { body: { name: 'Smoke questions' } }), 201);
  expectStatus(await client.POST('/api/v1/datasets/{dataset_id}/items', { params: { path: { dataset_id: dataset.id } }, body: { items } }), 201);
  return dataset.id;
}

async function completed(client: AgentPlatformClient, evalId: string): Promise<Eval> {
  return vi.waitFor(
    async () => {
      const evaluation = expectStatus(await client.GET('/api/v1/evals/{eval_id}', { params: { path: { eval_id: evalId } } }));
      expect(evaluation.status).toBe('completed');
      return evaluation;
    },
    { timeout: 30_000, interval: 100 },
  );
}

async function allResults(client: AgentPlatformClient, evalId: string): Promise<EvalResult[]> {
  const results: EvalResult[] = [];
  let cursor: string | undefined;
  do {
    const page = expectStatus(await client.GET('/api/v1/evals/{eval_id}/results', { params: { path: { eval_id: evalId }, query: { limit: 2, ...(cursor ? { cursor } : {}) } } }));
    results.push(...page.items);
    cursor = page.next_cursor ?? undefined;
  } while (cursor !== undefined);
  return results;
}

describe('evals', () => {
  it('POST /evals answers 202; every item runs as an eval run, is scored, and the eval completes with eval.completed', async () => {
    const { client, tenantId } = await newAccount(new Api());
    const secret = expectStatus(await client.POST('/api/v1/webhooks', { body: { url: receiver.url('/evals'), events: ['eval.completed'] } }), 201).signing_secret;
    const agentId = await createAgent(client);
    const datasetId = await createDataset(client, ITEMS);

    const created = await client.POST('/api/v1/evals', {
      body: { dataset_id: datasetId, agent_id: agentId, scorers: [{ type: 'contains' }, { type: 'llm_judge', rubric: 'Answers the question.', threshold: 0.5 }], concurrency: 2 },
    });
    const begun = expectStatus(created, 202);
    expect(begun).toMatchObject({ id: expect.stringMatching(id('eval')), status: 'running', dataset_id: datasetId, agent_id: agentId, agent_version: 1, concurrency: 2, item_count: 3, completed_at: null });
    expect(begun.created_at).toMatch(ISO_MS);
    expect(begun.scorers.map((scorer) => scorer['name'])).toEqual(['contains', 'llm_judge']);

    const done = await completed(client, begun.id);
    expect(done.progress).toEqual({ scored: 3, running: 0, pending: 0 });
    const results = await allResults(client, begun.id);
    expect(results.map((result) => [result.item_id.startsWith('dsi_'), result.position, result.input.message, result.state])).toEqual(ITEMS.map((item, position) => [true, position, item.input.message, 'scored']));
    expect(results[1]!.input.user_id).toBe('customer-9');
    for (const result of results) {
      const run = expectStatus(await client.GET('/api/v1/runs/{run_id}', { params: { path: { run_id: result.run_id! } } }));
      expect(run).toMatchObject({ trigger: 'eval', status: 'completed', agent_version: 1, output: result.output, credits: result.credits, user_id: result.input.user_id });
    }
    // The offline model echoes the question: it holds the first and third expected answers.
    expect(results.map((result) => result.scores.find((score) => score.name === 'contains')!.passed)).toEqual([true, false, true]);
    expect(done.summary.scorers.find((scorer) => scorer.name === 'contains')).toEqual({ name: 'contains', type: 'contains', mean: 2 / 3, pass_rate: 2 / 3 });
    expect(done.summary.credits).toBe(results.reduce((sum, result) => sum + result.credits!, 0));
    expect(done.summary.failed_runs).toBe(0);

    const [delivery] = await receiver.waitFor(1, { match: ofTenant(tenantId), timeoutMs: 15_000 });
    const event = verifyDelivery(delivery!, secret);
    expect(event).toMatchObject({ type: 'eval.completed', data: { eval_id: begun.id, agent_id: agentId, dataset_id: datasetId, status: 'completed', items: 3, passed: done.summary.passed } });

    const listed = expectStatus(await client.GET('/api/v1/evals', { params: { query: { agent_id: agentId } } }));
    expect(listed.items.map((item) => item.id)).toEqual([begun.id]);
  });

  it('GET /evals/compare pairs two evals of a dataset item by item; other datasets are 422, other tenants 404', async () => {
    const { client } = await newAccount(new Api());
    const agentId = await createAgent(client);
    const datasetId = await createDataset(client, ITEMS);
    const start = async (scorers: unknown[]) =>
      expectStatus(await client.POST('/api/v1/evals', { body: { dataset_id: datasetId, agent_id: agentId, scorers: scorers as never } }), 202).id;
    // The same outputs, scored against each item's expected and against a value no output holds.
    const base = await start([{ type: 'exact', value: 'nothing like it', name: 'verdict' }]);
    const candidate = await start([{ type: 'contains', name: 'verdict' }]);
    await completed(client, base);
    await completed(client, candidate);

    const comparison = expectStatus(await client.GET('/api/v1/evals/compare', { params: { query: { base, candidate } } }));
    expect(comparison).toMatchObject({ total: 3, improved: 2, regressed: 0, unchanged: 1, page: 1, per_page: 50 });
    expect(comparison.scorers).toEqual([{ name: 'verdict', base: 0, candidate: 2 / 3, change: 0.667 }]);
    expect(comparison.items.map((item) => [item.input.message, item.changed])).toEqual([
      [ITEMS[0]!.input.message, true],
      [ITEMS[2]!.input.message, true],
      [ITEMS[1]!.input.message, false],
    ]);

    const otherDataset = await createDataset(client, ITEMS.slice(0, 1));
    const elsewhere = expectStatus(await client.POST('/api/v1/evals', { body: { dataset_id: otherDataset, agent_id: agentId, scorers: [{ type: 'contains' }] } }), 202).id;
    expect(await statusOf(client.GET('/api/v1/evals/compare', { params: { query: { base, candidate: elsewhere } } }))).toBe(422);

    const stranger = (await newAccount(new Api())).client;
    expect(await statusOf(stranger.GET('/api/v1/evals/{eval_id}', { params: { path: { eval_id: base } } }))).toBe(404);
    expect(await statusOf(stranger.GET('/api/v1/evals/compare', { params: { query: { base, candidate } } }))).toBe(404);
    await completed(client, elsewhere);
  });

  it('POST /evals refuses what cannot run with the documented error', async () => {
    const { client } = await newAccount(new Api());
    const agentId = await createAgent(client);
    const datasetId = await createDataset(client, ITEMS);
    const post = (body: Record<string, unknown>) => client.POST('/api/v1/evals', { body: { dataset_id: datasetId, agent_id: agentId, scorers: [{ type: 'contains' }], ...body } as never });

    expect(await statusOf(post({ scorers: [{ type: 'vibes' }] }))).toBe(422);
    const badPattern = await post({ scorers: [{ type: 'regex', value: '(unclosed' }] });
    expect(badPattern.response.status).toBe(422);
    expect(badPattern.error?.details).toEqual([expect.objectContaining({ field: 'scorers[0].value' })]);
    expect(await statusOf(post({ scorers: [] }))).toBe(422);
    expect(await statusOf(post({ concurrency: 0 }))).toBe(422);
    expect(await statusOf(post({ agent_version: 7 }))).toBe(404);
    expect(await statusOf(post({ dataset_id: 'ds_01JQ0000000000000000000000' }))).toBe(404);
  });
});
