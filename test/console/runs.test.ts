import { streamChat, type AgentPlatformClient, type RunDetail } from '@agent-platform/client';
import { startReceiver, type Receiver } from '@agent-platform/kit/testing';
import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkPage, clientFor, messageFor, registerThroughConsole, useConsoleBrowser } from './harness/browser.js';

const { withConsole } = useConsoleBrowser();
let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver(() => ({ json: { state: 'refunded' } }));
});
afterAll(async () => {
  await receiver.close();
});

async function createAgent(api: AgentPlatformClient, name: string, tools: string[] = []): Promise<string> {
  const { data, response } = await api.POST('/api/v1/agents', { body: { name, type: 'assistant', tools, config: { memory_extraction: false } } });
  expect(response.status).toBe(201);
  return data!.id;
}

/** A tool that asks another agent (decisions §16): the call is a turn of that agent, its run the caller's child. */
async function agentTool(api: AgentPlatformClient, name: string, agentId: string): Promise<string> {
  const { data, response } = await api.POST('/api/v1/tools', { body: { name, type: 'agent', description: `Asks agent ${agentId}.`, config: { agent_id: agentId }, input_schema: { type: 'object' } } });
  expect(response.status).toBe(201);
  return data!.id;
}

async function chat(api: AgentPlatformClient, agentId: string, message: string) {
  const { data, response } = await api.POST('/api/v1/agents/{agent_id}/chat', { params: { path: { agent_id: agentId } }, body: { message } });
  expect(response.status).toBe(200);
  return data!;
}

async function getRun(api: AgentPlatformClient, runId: string): Promise<RunDetail> {
  const { data, response } = await api.GET('/api/v1/runs/{run_id}', { params: { path: { run_id: runId } } });
  expect(response.status).toBe(200);
  return data!;
}

/** An instant as a datetime-local control is typed: local time, to the minute. */
function localMinute(time: number): string {
  const date = new Date(time);
  return new Date(date.getTime() - date.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
}

const runRows = (page: Page) => page.getByRole('region', { name: 'Run list' }).locator('tbody tr');
const statFigure = (page: Page, term: string) => page.locator('.run-stats-figures').locator(`dt:text-is("${term}") + dd`);

/** The run id a turn's "Run details" link opens. */
async function runIdOf(link: Locator): Promise<string> {
  const href = (await link.getAttribute('href')) ?? '';
  const runId = /\/runs\/(run_[^/?#]+)/.exec(href)?.[1];
  expect(runId).toBeDefined();
  return runId!;
}

describe('an agent’s runs', () => {
  it('lists the runs with the agent’s stats; the filters live in the URL and survive a reload', async () => {
    await withConsole(async ({ page }) => {
      const api = await clientFor(await registerThroughConsole(page));
      const { data: refund } = await api.POST('/api/v1/tools', {
        body: { name: 'refund_order', type: 'http', config: { url: receiver.url('/refund') }, input_schema: { type: 'object' }, requires_approval: true },
      });
      const agentId = await createAgent(api, 'Orders', [refund!.id]);
      const first = await chat(api, agentId, 'Where is my order?');
      // Stops at the gated call: awaiting_approval.
      const waiting = await chat(api, agentId, 'refund_order {"order_id": "A-1"}');
      expect(waiting.status).toBe('awaiting_approval');
      for await (const event of streamChat(api, agentId, { message: 'Streamed hello' })) if (event.event === 'error') throw new Error(event.data.message);
      const { response: scored } = await api.POST('/api/v1/runs/{run_id}/feedback', { params: { path: { run_id: first.run_id } }, body: { score: 1 } });
      expect(scored.status).toBe(200);

      await page.goto(`/console/agents/${agentId}`);
      await page.getByRole('link', { name: 'Runs', exact: true }).click();
      await expect.poll(() => runRows(page).count()).toBe(3);
      await expect.poll(() => statFigure(page, 'Runs').textContent()).toBe('3');
      const { data: stats } = await api.GET('/api/v1/agents/{agent_id}/stats', { params: { path: { agent_id: agentId } } });
      expect(await statFigure(page, 'Credits').textContent()).toBe(stats!.credits.toLocaleString('en-US'));
      expect(await statFigure(page, 'Tokens').textContent()).toBe(stats!.usage.total_tokens.toLocaleString('en-US'));
      expect(await statFigure(page, 'Feedback').textContent()).toBe('+1.00 from 1 score');
      expect(await statFigure(page, 'Failure rate').textContent()).toBe('0.0% (0 failed)');
      // Newest first: status, trigger, version as the API has them.
      const cells = await runRows(page).first().getByRole('cell').allTextContents();
      expect(cells.slice(0, 3)).toEqual(['Streamed hello', 'completed', 'stream']);
      expect(cells.at(-1)).toBe('1');
      await checkPage(page, 'runs-tab');

      await page.getByLabel('Status').selectOption('completed');
      await expect.poll(() => runRows(page).count()).toBe(2);
      await page.getByLabel('Trigger').selectOption('chat');
      await expect.poll(() => runRows(page).count()).toBe(1);
      const since = localMinute(Date.parse((await getRun(api, first.run_id)).started_at) - 60_000);
      await page.getByLabel('Started from').fill(since);
      await expect.poll(() => new URL(page.url()).searchParams.get('since')).not.toBeNull();
      expect(Object.fromEntries(new URL(page.url()).searchParams)).toMatchObject({ tab: 'runs', status: 'completed', trigger: 'chat' });

      // As a person would: reload, and the same runs are shown with the same filters.
      await page.reload();
      await expect.poll(() => runRows(page).count()).toBe(1);
      expect(await runRows(page).first().getByRole('cell').first().textContent()).toBe('Where is my order?');
      expect(await page.getByLabel('Status').inputValue()).toBe('completed');
      expect(await page.getByLabel('Trigger').inputValue()).toBe('chat');
      expect(await page.getByLabel('Started from').inputValue()).toBe(since);
      await page.getByRole('status').filter({ hasText: '1 run matches these filters' }).waitFor();
      await checkPage(page, 'runs-tab-filtered');

      // A range that starts tomorrow: no runs, and the stats refuse it (it ends now), said beside the control.
      await page.getByLabel('Started from').fill(localMinute(Date.now() + 86_400_000));
      await page.getByText('No runs match these filters').waitFor();
      expect(await messageFor(page, 'Started from')).toBe('must not be after until');
      await expect.poll(() => page.locator('.run-stats').getByRole('alert').textContent()).toContain('Check the fields marked below.');
      await page.getByRole('button', { name: 'Clear filters' }).click();
      await expect.poll(() => [...new URL(page.url()).searchParams.keys()]).toEqual(['tab']);
      await expect.poll(() => runRows(page).count()).toBe(3);

      await page.getByRole('link', { name: 'Where is my order?' }).click();
      await page.getByRole('heading', { name: 'Run of Orders', level: 1 }).waitFor();
      expect(new URL(page.url()).pathname).toBe(`/console/runs/${first.run_id}`);
    });
  });
});

describe('a run’s page', () => {
  it('draws a playground turn’s steps to scale, the agents it called nested under their calls on the same axis, linked both ways', async () => {
    await withConsole(async ({ page }) => {
      const api = await clientFor(await registerThroughConsole(page));
      const expert = await createAgent(api, 'Refund expert');
      const helper = await createAgent(api, 'Billing helper', [await agentTool(api, 'ask_expert', expert)]);
      const front = await createAgent(api, 'Front desk', [await agentTool(api, 'ask_helper', helper)]);

      await page.goto(`/console/agents/${front}?tab=playground`);
      // The offline model calls the tools a message names with its first JSON object: Front desk asks
      // Billing helper, whose message names ask_expert, so it asks Refund expert in turn.
      await page.getByLabel('Message', { exact: true }).fill('ask_helper {"message": "ask_expert {\\"message\\": \\"What is the refund policy?\\"}"}');
      await page.getByRole('button', { name: 'Send' }).click();
      const turn = page.getByRole('list', { name: 'Conversation' }).getByRole('listitem').first();
      // Its feedback buttons come once the turn has ended.
      await turn.getByRole('button', { name: 'Good answer' }).waitFor({ timeout: 20_000 });
      expect(await turn.locator('.bubble-agent').textContent()).toContain('Tool results (1)');
      const details = turn.getByRole('link', { name: 'Run details' });
      const runId = await runIdOf(details);
      await details.click();
      await page.getByRole('heading', { name: 'Run of Front desk', level: 1 }).waitFor();

      const run = await getRun(api, runId);
      const call = run.steps.find((step) => step.type === 'tool');
      const childId = call?.type === 'tool' ? call.run_id : null;
      expect(childId).toMatch(/^run_/);
      const child = await getRun(api, childId!);
      const grandchildStep = child.steps.find((step) => step.type === 'tool');
      const grandchildId = grandchildStep?.type === 'tool' ? grandchildStep.run_id : null;
      expect(grandchildId).toMatch(/^run_/);
      expect(child).toMatchObject({ trigger: 'agent', parent_run_id: runId });

      const steps = page.getByRole('list', { name: 'Steps', exact: true });
      const types = (list: Locator) => list.locator(':scope > li > .step-line .step-type').allTextContents();
      await expect.poll(() => types(steps)).toEqual(['retrieval', 'model', 'tool', 'model']);
      const nested = page.getByRole('list', { name: `Steps of run ${childId}` });
      await expect.poll(() => types(nested)).toEqual(['retrieval', 'model', 'tool', 'model']);
      const deepest = page.getByRole('list', { name: `Steps of run ${grandchildId}` });
      await expect.poll(() => types(deepest)).toEqual(['retrieval', 'model']);
      // Nested inside the tool step that called it.
      const toolRow = steps.locator(':scope > li.step-tool');
      expect(await toolRow.getByRole('list', { name: `Steps of run ${childId}` }).count()).toBe(1);
      const facts = await toolRow.locator(':scope > .step-line').textContent();
      expect(facts).toContain('ask_helper');
      expect(facts).toContain('completed');
      await toolRow.locator(':scope > .step-details').getByText('Arguments of ask_helper').click();
      expect(await toolRow.locator(':scope > .step-details').textContent()).toContain('ask_expert');
      const model = (await steps.locator(':scope > li.step-model').first().textContent()) ?? '';
      expect(model).toContain('offline');
      expect(model).toContain('asked for ask_helper');
      expect(await page.locator('dl.facts').first().textContent()).toContain(runId);

      // To scale: each bar stands in its track where its step's start and duration put it on the
      // run's axis, and a called run's bars on the same axis, inside the call's.
      const origin = Date.parse(run.started_at);
      const span = Math.max(run.duration_ms ?? 0, ...run.steps.map((step) => Date.parse(step.started_at) + step.duration_ms - origin));
      const box = async (locator: Locator) => (await locator.boundingBox())!;
      const rows = steps.locator(':scope > li');
      for (let index = 0; index < run.steps.length; index += 1) {
        const step = run.steps[index]!;
        const track = await box(rows.nth(index).locator(':scope > .step-line .step-track'));
        const bar = await box(rows.nth(index).locator(':scope > .step-line .step-bar'));
        expect(bar.x - track.x).toBeCloseTo((Math.max(0, Date.parse(step.started_at) - origin) / span) * track.width, 0);
        expect(bar.width).toBeCloseTo(Math.max(2, (step.duration_ms / span) * track.width), 0);
      }
      const callBar = await box(toolRow.locator(':scope > .step-line .step-bar'));
      const callTrack = await box(toolRow.locator(':scope > .step-line .step-track'));
      for (const list of [nested, deepest]) {
        const tracks = list.locator(':scope > li > .step-line .step-track');
        const bars = list.locator(':scope > li > .step-line .step-bar');
        for (let index = 0; index < (await bars.count()); index += 1) {
          const track = await box(tracks.nth(index));
          expect(track.x).toBeCloseTo(callTrack.x, 0);
          expect(track.width).toBeCloseTo(callTrack.width, 0);
          const bar = await box(bars.nth(index));
          expect(bar.x).toBeGreaterThanOrEqual(callBar.x - 1);
          expect(bar.x + bar.width).toBeLessThanOrEqual(callBar.x + callBar.width + 2);
        }
      }
      await checkPage(page, 'run-waterfall');

      // The called run links to its caller, and back.
      await page.getByRole('link', { name: `Run ${childId}` }).click();
      await page.getByRole('heading', { name: 'Run of Billing helper', level: 1 }).waitFor();
      expect(await page.locator('dl.facts').first().textContent()).toContain('agent');
      await page.getByRole('link', { name: `Parent run ${runId}` }).click();
      await page.getByRole('heading', { name: 'Run of Front desk', level: 1 }).waitFor();
      expect(new URL(page.url()).pathname).toBe(`/console/runs/${runId}`);
    });
  });
});

describe('feedback in the playground', () => {
  it('thumbs up or down set the run’s feedback, the other replaces it, a reload shows it, and the same again takes it back', async () => {
    await withConsole(async ({ page }) => {
      const api = await clientFor(await registerThroughConsole(page));
      const agentId = await createAgent(api, 'Greeter');
      await page.goto(`/console/agents/${agentId}?tab=playground`);
      await page.getByLabel('Message', { exact: true }).fill('Hello!');
      await page.getByRole('button', { name: 'Send' }).click();
      const turn = page.getByRole('list', { name: 'Conversation' }).getByRole('listitem').first();
      const good = turn.getByRole('button', { name: 'Good answer' });
      const bad = turn.getByRole('button', { name: 'Bad answer' });
      await good.waitFor();
      const runId = await runIdOf(turn.getByRole('link', { name: 'Run details' }));
      const score = async () => (await getRun(api, runId)).feedback?.score ?? null;
      expect(await score()).toBeNull();
      expect(await good.getAttribute('aria-pressed')).toBe('false');

      await good.click();
      await expect.poll(score).toBe(1);
      await expect.poll(() => good.getAttribute('aria-pressed')).toBe('true');
      expect(await bad.getAttribute('aria-pressed')).toBe('false');
      await checkPage(page, 'playground-feedback');

      await bad.click();
      await expect.poll(score).toBe(-1);
      await expect.poll(() => bad.getAttribute('aria-pressed')).toBe('true');
      expect(await good.getAttribute('aria-pressed')).toBe('false');

      // Reloaded: the session's turn finds its run, and shows the score given.
      await expect.poll(() => new URL(page.url()).searchParams.get('session')).toMatch(/^ses_/);
      await page.reload();
      await page.getByRole('heading', { name: 'Conversation' }).waitFor();
      await expect.poll(() => bad.getAttribute('aria-pressed')).toBe('true');
      expect(await runIdOf(turn.getByRole('link', { name: 'Run details' }))).toBe(runId);

      // The same thumb again: back to neutral.
      await bad.click();
      await expect.poll(score).toBe(0);
      await expect.poll(() => bad.getAttribute('aria-pressed')).toBe('false');
      expect(await good.getAttribute('aria-pressed')).toBe('false');
    });
  });
});
