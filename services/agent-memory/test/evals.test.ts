import type { Eval, EvalResult } from '@agent-platform/proto/agents/v1/evals';
import type { Run } from '@agent-platform/proto/agents/v1/runs';
import { describe, expect, vi } from 'vitest';
import { DomainError } from '@agent-platform/kit';
import type { ChatCompletion, ChatModel } from '../src/models/chat-model.js';
import { agentMemoryTest, eventsOf, expectError, newTenant, ownDatabaseTest, startAgentMemory, type AgentMemoryHarness, type TestTenant } from './support/harness.js';

/** decisions §16: an eval runs an agent on every item of a dataset, as runs, and scores each. */

const test = agentMemoryTest();

/** The model port of a provider that is down: every request fails as the adapters fail it (chat-model.ts). */
class ProviderDown implements ChatModel {
  static readonly MESSAGE = 'The language model provider is unavailable.';
  readonly name = 'down';

  complete(): Promise<ChatCompletion> {
    return Promise.reject(new DomainError('upstream_error', ProviderDown.MESSAGE));
  }

  // eslint-disable-next-line require-yield -- it fails before its first piece, as a provider that refuses the request does
  async *stream(): AsyncGenerator<string, ChatCompletion, void> {
    await Promise.resolve();
    throw new DomainError('upstream_error', ProviderDown.MESSAGE);
  }
}

interface Item {
  message: string;
  expected?: string;
  userId?: string;
}

async function datasetOf(service: AgentMemoryHarness, tenant: TestTenant, items: readonly Item[]): Promise<string> {
  const call = { principal: tenant.principal };
  const { dataset } = await service.datasets.createDataset({ name: 'Questions' }, call);
  if (items.length > 0) {
    await service.datasets.addDatasetItems(
      { datasetId: dataset!.id, batch: { items: items.map((item) => ({ input: { message: item.message, userId: item.userId }, expected: item.expected })) } },
      call,
    );
  }
  return dataset!.id;
}

async function completed(service: AgentMemoryHarness, tenant: TestTenant, evalId: string): Promise<Eval> {
  return vi.waitFor(
    async () => {
      const { eval: evaluation } = await service.evals.getEval({ evalId }, { principal: tenant.principal });
      expect(evaluation!.status).toBe('completed');
      return evaluation!;
    },
    { timeout: 30_000, interval: 50 },
  );
}

async function resultsOf(service: AgentMemoryHarness, tenant: TestTenant, evalId: string): Promise<EvalResult[]> {
  const results: EvalResult[] = [];
  let cursor: string | undefined;
  do {
    const page = await service.evals.listEvalResults({ evalId, page: { limit: 2, cursor } }, { principal: tenant.principal });
    results.push(...page.results);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return results;
}

async function runOf(service: AgentMemoryHarness, tenant: TestTenant, runId: string): Promise<Run> {
  return (await service.runs.getRun({ runId }, { principal: tenant.principal })).run!;
}

const ITEMS: Item[] = [
  { message: 'Where is the Eiffel Tower?', expected: 'Eiffel Tower', userId: 'customer-1' },
  { message: 'Name a colour of the sky', expected: 'colour of the sky' },
  { message: 'Say hello', expected: 'goodbye forever' },
  { message: 'What is two plus two?', expected: 'two plus two' },
  { message: 'Which planet is red?', expected: 'planet', userId: 'customer-2' },
];

describe('An eval', () => {
  test('runs each item as a run of the agent, at most its concurrency at once, scores it, and completes with eval.completed', async ({ service }) => {
    const tenant = newTenant();
    const call = { principal: tenant.principal };
    // It extracts memory per end user: an eval's turn must not.
    const agent = await service.createAgent(tenant, { memoryTypes: ['semantic'] });
    const datasetId = await datasetOf(service, tenant, ITEMS);
    const scorers = [{ type: 'contains' }, { type: 'exact', value: 'never the answer', name: 'exact-miss' }, { type: 'llm_judge', rubric: 'Repeats what it was asked.' }];

    const { eval: begun } = await service.evals.createEval({ datasetId, agentId: agent.id, scorersJson: JSON.stringify(scorers), concurrency: 2 }, call);
    expect(begun).toMatchObject({ status: 'running', datasetId, agentId: agent.id, agentVersion: 1, concurrency: 2, itemCount: 5 });
    expect(JSON.parse(begun!.scorersJson)).toEqual([
      expect.objectContaining({ type: 'contains', name: 'contains' }),
      expect.objectContaining({ type: 'exact', value: 'never the answer', name: 'exact-miss' }),
      expect.objectContaining({ type: 'llm_judge', rubric: 'Repeats what it was asked.', name: 'llm_judge', threshold: 0.5 }),
    ]);
    // Queued at once, no more than its concurrency.
    expect(begun!.summary).toMatchObject({ running: 2, pending: 3, scored: 0 });

    const done = await completed(service, tenant, begun!.id);
    const results = await resultsOf(service, tenant, begun!.id);
    expect(results.map((result) => [result.position, result.input!.message, result.state])).toEqual(ITEMS.map((item, position) => [position, item.message, 'scored']));

    const runs = await Promise.all(results.map((result) => runOf(service, tenant, result.runId!)));
    for (const [index, run] of runs.entries()) {
      expect(run).toMatchObject({ trigger: 'eval', status: 'completed', agentVersion: 1, input: ITEMS[index]!.message, userId: ITEMS[index]!.userId });
      const result = results[index]!;
      expect(result).toMatchObject({ runStatus: 'completed', output: run.output, durationMs: run.durationMs, credits: run.credits });
      // The offline model echoes the question, which holds each expected but the third.
      const contains = result.scores.find((score) => score.name === 'contains')!;
      expect(contains).toMatchObject({ type: 'contains', score: index === 2 ? 0 : 1, passed: index !== 2 });
      expect(result.scores.find((score) => score.name === 'exact-miss')).toMatchObject({ score: 0, passed: false });
      expect(result.passed).toBe(false);
    }
    // Each run was queued only once an earlier one had ended, so never more than two at once.
    const byStart = runs.toSorted((a, b) => a.startedAt!.getTime() - b.startedAt!.getTime());
    for (const [index, run] of byStart.entries()) {
      const endedBefore = byStart.filter((other) => other.completedAt!.getTime() <= run.startedAt!.getTime()).length;
      expect(endedBefore, `run ${index} was queued with too many in flight`).toBeGreaterThanOrEqual(index - 1);
    }

    // Charged as turns: one charge per run's answer.
    const charges = service.credits.charges.filter((charge) => charge.tenantId === tenant.tenantId);
    expect(charges).toHaveLength(ITEMS.length);
    expect(done.summary).toMatchObject({ scored: 5, running: 0, pending: 0, passed: 0, failedRuns: 0, credits: charges.reduce((sum, charge) => sum + charge.amount, 0) });
    const judge = done.summary!.scorers.find((scorer) => scorer.name === 'llm_judge')!;
    const judged = results.map((result) => result.scores.find((score) => score.name === 'llm_judge')!.score);
    expect(judge.mean).toBeCloseTo(judged.reduce((sum, score) => sum + score, 0) / judged.length, 6);
    expect(done.summary!.scorers.find((scorer) => scorer.name === 'contains')).toMatchObject({ mean: 0.8, passRate: 0.8 });

    const [event] = await eventsOf(service.database, tenant.tenantId, 'eval.completed');
    expect(event?.data).toMatchObject({ eval_id: begun!.id, agent_id: agent.id, agent_version: 1, dataset_id: datasetId, status: 'completed', items: 5, passed: 0, failed_runs: 0 });
    expect(await eventsOf(service.database, tenant.tenantId, 'run.completed')).toEqual([]);
    // No turn of the eval was queued for extraction, though two named an end user.
    const extractions = await service.database.query(`select 1 from memory_extractions where tenant_id = $1`, [tenant.tenantId]);
    expect(extractions).toEqual([]);

    // As a replica that stopped between the last score and the eval's end leaves it: ended by the next poll, with its event.
    await service.database.query(`update evals set status = 'running', completed_at = null where id = $1`, [begun!.id]);
    await service.database.query(`delete from outbox where payload->>'tenant_id' = $1 and payload->>'type' = 'eval.completed'`, [tenant.tenantId]);
    await completed(service, tenant, begun!.id);
    expect((await eventsOf(service.database, tenant.tenantId, 'eval.completed')).map((told) => told.data['eval_id'])).toEqual([begun!.id]);
  });

  ownDatabaseTest('scores every scorer 0 for an item whose run failed, with its reason, and completes all the same', async ({ database }) => {
    // A provider that is down: every run of the eval fails as a turn would, with upstream_error.
    const down = await startAgentMemory(database, { model: new ProviderDown() });
    try {
      const tenant = newTenant();
      const call = { principal: tenant.principal };
      const agent = await down.createAgent(tenant, { configJson: JSON.stringify({ memory_extraction: false }) });
      const datasetId = await datasetOf(down, tenant, ITEMS.slice(0, 2));
      const { eval: begun } = await down.evals.createEval({ datasetId, agentId: agent.id, scorersJson: JSON.stringify([{ type: 'contains' }]), concurrency: 1 }, call);

      const done = await completed(down, tenant, begun!.id);
      const results = await resultsOf(down, tenant, begun!.id);
      expect(results).toHaveLength(2);
      for (const result of results) {
        expect(result).toMatchObject({ state: 'scored', runStatus: 'failed', passed: false, error: { code: 'upstream_error', message: ProviderDown.MESSAGE } });
        expect(result.scores).toEqual([expect.objectContaining({ name: 'contains', score: 0, passed: false, reason: ProviderDown.MESSAGE })]);
      }
      expect(done.summary).toMatchObject({ scored: 2, passed: 0, failedRuns: 2, credits: 0 });
      expect(down.credits.charges.filter((charge) => charge.tenantId === tenant.tenantId)).toEqual([]);
    } finally {
      await down.stop();
    }
  });

  test('compares two evals of a dataset item by item, changed items first', async ({ service }) => {
    const tenant = newTenant();
    const call = { principal: tenant.principal };
    // The same questions to an agent without memories and to one that remembers the answer.
    const forgetful = await service.createAgent(tenant, { memoryTypes: [], configJson: JSON.stringify({ memory_extraction: false }) });
    const informed = await service.createAgent(tenant, { memoryTypes: ['semantic'], configJson: JSON.stringify({ memory_extraction: false }) });
    await service.memory.addMemory({ agentId: informed.id, memoryType: 'semantic', content: 'Refunds are granted within 30 days of delivery.' }, call);
    const items = [
      { message: 'Say hello', expected: 'goodbye forever' },
      { message: 'How many days do I have to ask for a refund?', expected: '30 days' },
      { message: 'Within how many days of delivery are refunds granted?', expected: '30 days' },
    ];
    const datasetId = await datasetOf(service, tenant, items);
    const scorers = JSON.stringify([{ type: 'contains' }]);
    const { eval: base } = await service.evals.createEval({ datasetId, agentId: forgetful.id, scorersJson: scorers }, call);
    const { eval: candidate } = await service.evals.createEval({ datasetId, agentId: informed.id, scorersJson: scorers }, call);
    await completed(service, tenant, base!.id);
    await completed(service, tenant, candidate!.id);

    const comparison = await service.evals.compareEvals({ baseEvalId: base!.id, candidateEvalId: candidate!.id, page: { page: 1, perPage: 10 } }, call);
    expect(comparison).toMatchObject({ total: 3, improved: 2, regressed: 0, unchanged: 1 });
    expect(comparison.scorers).toEqual([expect.objectContaining({ name: 'contains', base: 0, change: 0.667 })]);
    expect(comparison.items.map((item) => [item.input!.message, item.changed, item.scores[0]!.change])).toEqual([
      [items[1]!.message, true, 1],
      [items[2]!.message, true, 1],
      [items[0]!.message, false, 0],
    ]);
    const candidateResults = await resultsOf(service, tenant, candidate!.id);
    expect(comparison.items[0]!.candidate).toMatchObject({ runId: candidateResults[1]!.runId, output: candidateResults[1]!.output, passed: true });
    expect(comparison.items[0]!.base).toMatchObject({ passed: false });

    const other = await datasetOf(service, tenant, items.slice(0, 1));
    const { eval: elsewhere } = await service.evals.createEval({ datasetId: other, agentId: forgetful.id, scorersJson: scorers }, call);
    const refused = await expectError(service.evals.compareEvals({ baseEvalId: base!.id, candidateEvalId: elsewhere!.id, page: undefined }, call), 'validation_error');
    expect(refused.details).toEqual([expect.objectContaining({ field: 'candidate' })]);
    await completed(service, tenant, elsewhere!.id);
  });

  test('is refused for what cannot run, naming the field, and is not found by another tenant', async ({ service }) => {
    const tenant = newTenant();
    const call = { principal: tenant.principal };
    const agent = await service.createAgent(tenant, { configJson: JSON.stringify({ memory_extraction: false }) });
    const withExpected = await datasetOf(service, tenant, ITEMS.slice(0, 1));
    const without = await datasetOf(service, tenant, [{ message: 'No answer given' }]);
    const empty = await datasetOf(service, tenant, []);
    const create = (datasetId: string, scorers: unknown, extra: { concurrency?: number; agentVersion?: number } = {}) =>
      service.evals.createEval({ datasetId, agentId: agent.id, scorersJson: JSON.stringify(scorers), ...extra }, call);

    expect((await expectError(create(empty, [{ type: 'contains' }]), 'validation_error')).details).toEqual([expect.objectContaining({ field: 'dataset_id' })]);
    expect((await expectError(create(without, [{ type: 'exact', value: 'x' }, { type: 'contains' }]), 'validation_error')).details).toEqual([expect.objectContaining({ field: 'scorers[1]' })]);
    expect((await expectError(create(withExpected, [{ type: 'contains' }, { type: 'regex', value: '(' }]), 'validation_error')).details).toEqual([expect.objectContaining({ field: 'scorers[1].value' })]);
    expect((await expectError(create(withExpected, [{ type: 'contains' }], { concurrency: 17 }), 'validation_error')).details).toEqual([expect.objectContaining({ field: 'concurrency' })]);
    await expectError(create(withExpected, [{ type: 'contains' }], { agentVersion: 9 }), 'not_found');
    await expectError(create('ds_01JQ0000000000000000000000', [{ type: 'contains' }]), 'not_found');
    service.credits.balances.set(tenant.tenantId, 0);
    await expectError(create(withExpected, [{ type: 'contains' }]), 'insufficient_credits');
    service.credits.balances.set(tenant.tenantId, 100);

    const { eval: mine } = await create(withExpected, [{ type: 'contains' }]);
    const stranger = { principal: newTenant().principal };
    await expectError(service.evals.getEval({ evalId: mine!.id }, stranger), 'not_found');
    await expectError(service.evals.listEvalResults({ evalId: mine!.id, page: undefined }, stranger), 'not_found');
    expect((await service.evals.listEvals({ page: { page: 1, perPage: 10 } }, stranger)).total).toBe(0);
    await expectError(service.evals.listEvalResults({ evalId: mine!.id, page: { limit: 10, cursor: 'bm90IG91cnM' } }, call), 'validation_error');
    await completed(service, tenant, mine!.id);
  });
});
