import type { AgentPlatformClient, Eval, EvalComparison, EvalResult, Scorer } from '@agent-platform/client';
import { startReceiver, type Receiver } from '@agent-platform/kit/testing';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { checkPage, clientFor, messageFor, registerThroughConsole, useConsoleBrowser } from './harness/browser.js';

const { withConsole } = useConsoleBrowser();
/** The policy service the agent's tool asks: it answers only when the test lets it, so an item's run stays running till then. */
let policy: Receiver;
beforeAll(async () => {
  policy = await startReceiver({ json: { policy: 'ask support' }, hold: 'answer' });
});
afterAll(async () => {
  await policy.close();
});

/**
 * The offline model's answer quotes the message, so what each scorer finds is known: the base's
 * `answer` (each item's expected) passes items 1 and 3; `refund` as the value passes 1, 2 and 4.
 * Against the base, the candidate improves items 2 and 4, regresses 3, and leaves 1 as it was.
 * Item 4 names the agent's tool, where it has one: the model calls it, and its run waits on it.
 */
const ITEMS = [
  { input: { message: 'Refunds are accepted within 30 days.' }, expected: '30 days' },
  { input: { message: 'Gift cards cannot be refunded.' }, expected: '30 days' },
  { input: { message: 'Shipping takes 5 days.' }, expected: '5 days' },
  { input: { message: 'Can I get a refund after a month? Ask check_policy.' }, expected: '30 days' },
];
const BASE_SCORERS: Scorer[] = [
  { type: 'contains', name: 'answer' },
  { type: 'regex', value: '\\d+ days', name: 'pattern' },
];
const CANDIDATE_SCORERS: Scorer[] = [{ type: 'contains', value: 'refund', name: 'answer' }];

async function setUp(api: AgentPlatformClient, { withTool = false } = {}): Promise<{ agentId: string; datasetId: string }> {
  const tools: string[] = [];
  if (withTool) {
    const { data: tool, response } = await api.POST('/api/v1/tools', { body: { name: 'check_policy', type: 'http', config: { url: policy.url('/policy') }, input_schema: { type: 'object' } } });
    expect(response.status).toBe(201);
    tools.push(tool!.id);
  }
  const { data: agent, response: made } = await api.POST('/api/v1/agents', { body: { name: 'Refund desk', type: 'assistant', tools, config: { memory_extraction: false } } });
  expect(made.status).toBe(201);
  const { data: dataset, response: created } = await api.POST('/api/v1/datasets', { body: { name: 'Refund questions' } });
  expect(created.status).toBe(201);
  const { response: added } = await api.POST('/api/v1/datasets/{dataset_id}/items', { params: { path: { dataset_id: dataset!.id } }, body: { items: ITEMS } });
  expect(added.status).toBe(201);
  return { agentId: agent!.id, datasetId: dataset!.id };
}

async function startEval(api: AgentPlatformClient, agentId: string, datasetId: string, scorers: Scorer[]): Promise<string> {
  const { data, response } = await api.POST('/api/v1/evals', { body: { dataset_id: datasetId, agent_id: agentId, scorers } });
  expect(response.status).toBe(202);
  return data!.id;
}

async function getEval(api: AgentPlatformClient, evalId: string): Promise<Eval> {
  const { data, response } = await api.GET('/api/v1/evals/{eval_id}', { params: { path: { eval_id: evalId } } });
  expect(response.status).toBe(200);
  return data!;
}

/** The eval once it has completed, read through the API: the test's own sentinel, no page involved. */
function completed(api: AgentPlatformClient, evalId: string): Promise<Eval> {
  return vi.waitFor(
    async () => {
      const evaluation = await getEval(api, evalId);
      expect(evaluation.status).toBe('completed');
      return evaluation;
    },
    { timeout: 30_000, interval: 200 },
  );
}

async function results(api: AgentPlatformClient, evalId: string): Promise<EvalResult[]> {
  const { data, response } = await api.GET('/api/v1/evals/{eval_id}/results', { params: { path: { eval_id: evalId }, query: { limit: 200 } } });
  expect(response.status).toBe(200);
  return data!.items;
}

async function compare(api: AgentPlatformClient, base: string, candidate: string): Promise<EvalComparison> {
  const { data, response } = await api.GET('/api/v1/evals/compare', { params: { query: { base, candidate } } });
  expect(response.status).toBe(200);
  return data!;
}

/** The bodies of the POST /evals the page sends, as they are sent. */
function evalPosts(page: Page): string[] {
  const posts: string[] = [];
  page.on('request', (request) => {
    if (request.method() === 'POST' && new URL(request.url()).pathname === '/api/v1/evals') posts.push(request.postData() ?? '');
  });
  return posts;
}

const rows = (page: Page, table: string) => page.getByRole('region', { name: table, exact: true }).locator('tbody tr');
const cellTexts = async (page: Page, table: string, row: number) => (await rows(page, table).nth(row).getByRole('cell').allTextContents()).map((text) => text.trim());
const figure = (page: Page, section: string, term: string) => page.getByRole('region', { name: section, exact: true }).locator(`dt:text-is("${term}") + dd`);

describe('evals in the console', () => {
  it('starts an eval from a dataset’s page, shows the API’s refusal of a bad pattern on its field, follows the eval to its end, and its summary and results are the API’s', async () => {
    await withConsole(async ({ page }) => {
      const api = await clientFor(await registerThroughConsole(page));
      const { agentId, datasetId } = await setUp(api, { withTool: true });

      const posts = evalPosts(page);
      await page.goto(`/console/datasets/${datasetId}`);
      await page.getByRole('link', { name: 'New eval' }).click();
      await page.getByRole('heading', { name: 'New eval', level: 1 }).waitFor();
      expect(await page.getByLabel('Dataset', { exact: true }).inputValue()).toBe(datasetId);
      await page.getByLabel('Agent', { exact: true }).selectOption({ label: 'Refund desk' });
      await expect.poll(() => page.getByLabel('Version', { exact: true }).locator('option').allTextContents()).toEqual(['Current (version 1)', 'Version 1']);
      await page.getByLabel('Concurrency').fill('2');
      const first = page.getByRole('group', { name: 'Scorer 1' });
      await first.getByLabel('Name (optional)').fill('answer');
      await page.getByRole('button', { name: 'Add a scorer' }).click();
      const second = page.getByRole('group', { name: 'Scorer 2' });
      await second.getByLabel('Name (optional)').fill('pattern');
      // A schema that is not JSON is found before anything is sent, and said on its box.
      await second.getByLabel('Type').selectOption('json_schema');
      await second.getByLabel('JSON schema').fill('{"type": ');
      await page.getByRole('button', { name: 'Start eval' }).click();
      expect(await messageFor(page, 'JSON schema')).toContain('is not valid JSON');
      expect(posts).toEqual([]);

      // Another type keeps the name typed.
      await second.getByLabel('Type').selectOption('regex');
      expect(await second.getByLabel('Name (optional)').inputValue()).toBe('pattern');
      await second.getByLabel('Pattern').fill('(\\d+ days');
      await page.getByRole('button', { name: 'Start eval' }).click();

      // RE2 refuses the unclosed group: the API names scorers[1].value, shown on the pattern's box.
      expect(await messageFor(page, 'Pattern')).toContain('is not a valid pattern');
      await expect.poll(() => page.getByRole('alert').textContent()).toContain('Check the fields marked below.');
      expect(posts).toHaveLength(1);
      expect(JSON.parse(posts[0]!)).toEqual({ dataset_id: datasetId, agent_id: agentId, concurrency: 2, scorers: [{ type: 'contains', name: 'answer' }, { type: 'regex', value: '(\\d+ days', name: 'pattern' }] });
      const { data: none } = await api.GET('/api/v1/evals', {});
      expect(none!.total).toBe(0);
      await checkPage(page, 'eval-new-refused');

      await second.getByLabel('Pattern').fill('\\d+ days');
      await page.getByRole('button', { name: 'Start eval' }).click();
      await page.getByRole('heading', { name: 'Eval of Refund desk', level: 1 }).waitFor();
      const evalId = new URL(page.url()).pathname.split('/').at(-1)!;
      expect(evalId).toMatch(/^eval_/);

      // The page reads the eval again while it runs: the other items are scored while item 4's run
      // waits on its tool, then, once the tool answers, the bar reaches every item without a reload.
      await policy.waitFor(1);
      const progress = page.getByRole('progressbar');
      await expect.poll(() => progress.getAttribute('aria-valuenow'), { timeout: 30_000 }).toBe(String(ITEMS.length - 1));
      expect(await page.locator('.progress-legend').textContent()).toContain('1 running');
      expect(await page.locator('.facts .badge').textContent()).toBe('running');
      await expect.poll(() => rows(page, 'Item results').nth(3).getByRole('cell').nth(3).textContent()).toBe('running…');
      await expect.poll(() => rows(page, 'Item results').nth(2).getByRole('cell').last().textContent()).toBe('Run');
      await checkPage(page, 'eval-running');
      expect(policy.release()).toBe(1);
      await expect.poll(() => progress.getAttribute('aria-valuenow'), { timeout: 30_000 }).toBe(String(ITEMS.length));
      // The results follow: item 4 has its answer now, read without a reload.
      await rows(page, 'Item results').nth(3).getByText('Output of item 4').waitFor();
      const evaluation = await getEval(api, evalId);
      expect(evaluation).toMatchObject({ status: 'completed', concurrency: 2, scorers: [expect.objectContaining({ name: 'answer', type: 'contains' }), expect.objectContaining({ name: 'pattern', type: 'regex', value: '\\d+ days' })] });
      await expect.poll(() => page.locator('.facts .badge').textContent()).toBe('completed');
      expect(await progress.getAttribute('aria-valuetext')).toBe('4 of 4 items scored');

      const { summary } = evaluation;
      expect(summary.passed).toBe(2);
      expect(await figure(page, 'Summary', 'Passed').textContent()).toBe(`${summary.passed} of ${ITEMS.length}`);
      expect(await figure(page, 'Summary', 'Failed runs').textContent()).toBe(String(summary.failed_runs));
      expect(await figure(page, 'Summary', 'Tokens').textContent()).toBe(summary.tokens.toLocaleString('en-US'));
      expect(await figure(page, 'Summary', 'Credits').textContent()).toBe(summary.credits.toLocaleString('en-US'));
      expect(await figure(page, 'Summary', 'p50 duration').locator('data').getAttribute('value')).toBe(String(summary.duration_ms.p50));
      expect(await figure(page, 'Summary', 'p95 duration').locator('data').getAttribute('value')).toBe(String(summary.duration_ms.p95));
      expect(summary.scorers.map((scorer) => [scorer.name, scorer.mean, scorer.pass_rate])).toEqual([
        ['answer', 0.5, 0.5],
        ['pattern', 0.5, 0.5],
      ]);
      for (const [index, scorer] of summary.scorers.entries()) {
        expect(await cellTexts(page, 'Scorers', index)).toEqual([scorer.name, scorer.type, scorer.mean!.toFixed(2), `${(scorer.pass_rate! * 100).toFixed(1)}%`]);
      }

      // The results in the dataset's order, each scorer's verdict with its reason a click away.
      const stored = await results(api, evalId);
      await expect.poll(() => rows(page, 'Item results').count()).toBe(ITEMS.length);
      expect(await Promise.all(ITEMS.map(async (_, index) => (await cellTexts(page, 'Item results', index)).slice(0, 3)))).toEqual(stored.map((result) => [String(result.position + 1), result.input.message, result.expected]));
      const refused = rows(page, 'Item results').nth(1);
      const answer = stored[1]!.scores.find((score) => score.name === 'answer')!;
      expect(answer).toMatchObject({ passed: false, score: 0 });
      await refused.getByText('failed').first().click();
      await expect.poll(() => refused.locator('.score-reason p').first().textContent()).toBe(answer.reason);
      expect(await refused.getByRole('cell').last().textContent()).toBe('Run');
      await page.getByText('Output of item 1').click();
      await expect.poll(() => rows(page, 'Item results').first().locator('.eval-output p').textContent()).toBe(stored[0]!.output);
      await checkPage(page, 'eval-completed');

      await page.getByRole('link', { name: 'Run of item 1' }).click();
      await page.getByRole('heading', { name: 'Run of Refund desk', level: 1 }).waitFor();
      expect(new URL(page.url()).pathname).toBe(`/console/runs/${stored[0]!.run_id}`);

      // The agent's evals, a filter in the URL that a reload keeps.
      await page.goto(`/console/agents/${agentId}`);
      await page.getByRole('main').getByRole('link', { name: 'Evals', exact: true }).click();
      await expect.poll(() => new URL(page.url()).searchParams.get('agent_id')).toBe(agentId);
      await page.reload();
      await expect.poll(() => rows(page, 'Eval list').count()).toBe(1);
      expect(await page.getByLabel('Agent', { exact: true }).inputValue()).toBe(agentId);
      expect((await cellTexts(page, 'Eval list', 0)).slice(1)).toEqual(['Refund desk version 1', 'Refund questions', 'completed', '4 / 4 scored', 'answer: 50.0%pattern: 50.0%']);
      await checkPage(page, 'evals');
      await rows(page, 'Eval list').first().getByRole('link').click();
      await page.getByRole('heading', { name: 'Eval of Refund desk', level: 1 }).waitFor();
      expect(new URL(page.url()).pathname).toBe(`/console/evals/${evalId}`);
    });
  });

  it('compares two evals of one dataset: each scorer’s change, the counts of the API, the changed items first, and a reload keeps it', async () => {
    await withConsole(async ({ page }) => {
      const api = await clientFor(await registerThroughConsole(page));
      const { agentId, datasetId } = await setUp(api);
      const base = await startEval(api, agentId, datasetId, BASE_SCORERS);
      await completed(api, base);
      const candidate = await startEval(api, agentId, datasetId, CANDIDATE_SCORERS);
      await completed(api, candidate);

      await page.goto(`/console/evals/${base}`);
      await page.getByRole('heading', { name: 'Eval of Refund desk', level: 1 }).waitFor();
      await page.getByLabel('Another eval of this dataset').locator(`option[value="${candidate}"]`).waitFor({ state: 'attached' });
      await page.getByRole('button', { name: 'Compare', exact: true }).click();
      await page.getByRole('heading', { name: 'Compare evals', level: 1 }).waitFor();
      // The older is the base whichever page it was compared from.
      expect(Object.fromEntries(new URL(page.url()).searchParams)).toEqual({ base, candidate });

      const comparison = await compare(api, base, candidate);
      expect(comparison).toMatchObject({ improved: 2, regressed: 1, unchanged: 1, total: ITEMS.length });
      const expectCompared = async () => {
        await expect.poll(() => rows(page, 'Items compared').count()).toBe(ITEMS.length);
        expect(await figure(page, 'Changes', 'Improved').textContent()).toBe(`▲ ${comparison.improved}`);
        expect(await figure(page, 'Changes', 'Regressed').textContent()).toBe(`▼ ${comparison.regressed}`);
        expect(await figure(page, 'Changes', 'Unchanged').textContent()).toBe(`= ${comparison.unchanged}`);
        expect(comparison.scorers).toEqual([
          { name: 'answer', base: 0.5, candidate: 0.75, change: 0.25 },
          { name: 'pattern', base: 0.5, candidate: null, change: null },
        ]);
        expect(await cellTexts(page, 'Scorers compared', 0)).toEqual(['answer', '0.50', '0.75', '▲ up 0.25']);
        expect(await cellTexts(page, 'Scorers compared', 1)).toEqual(['pattern', '0.50', '— (not scored by it)', '—']);
        // Changed items first, as the API ranks them: items 2 and 4 up, 3 down, then item 1 unchanged.
        expect(comparison.items.map((item) => [item.input.message, item.changed])).toEqual([
          [ITEMS[1]!.input.message, true],
          [ITEMS[2]!.input.message, true],
          [ITEMS[3]!.input.message, true],
          [ITEMS[0]!.input.message, false],
        ]);
        const shown = await Promise.all(comparison.items.map(async (_, index) => (await cellTexts(page, 'Items compared', index)).slice(0, 3)));
        expect(shown).toEqual([
          [ITEMS[1]!.input.message, '30 days', '▲ improved'],
          [ITEMS[2]!.input.message, '5 days', '▼ regressed'],
          [ITEMS[3]!.input.message, '30 days', '▲ improved'],
          [ITEMS[0]!.input.message, '30 days', '= unchanged'],
        ]);
      };
      await expectCompared();
      // Both outputs side by side, each with its verdict and its run.
      const regressed = rows(page, 'Items compared').nth(1);
      await regressed.getByText('Base output').click();
      await regressed.getByText('Candidate output').click();
      const outputs = await regressed.locator('.eval-output p').allTextContents();
      expect(outputs).toEqual([comparison.items[1]!.base.output, comparison.items[1]!.candidate.output]);
      expect(await regressed.locator('.verdict').allTextContents()).toEqual(['✓ passed', '✗ failed']);
      expect(await regressed.getByRole('link', { name: 'Candidate run' }).getAttribute('href')).toBe(`/console/runs/${comparison.items[1]!.candidate.run_id}`);
      await checkPage(page, 'eval-compare');

      await page.reload();
      await page.getByRole('heading', { name: 'Compare evals', level: 1 }).waitFor();
      await expectCompared();

      await page.getByRole('link', { name: 'Swap base and candidate' }).click();
      await expect.poll(() => Object.fromEntries(new URL(page.url()).searchParams)).toEqual({ base: candidate, candidate: base });
      await expect.poll(() => figure(page, 'Changes', 'Improved').textContent()).toBe(`▲ ${comparison.regressed}`);
    });
  });
});
