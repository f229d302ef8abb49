import type { AgentPlatformClient, RequestBody } from '@agent-platform/client';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { checkPage, clientFor, registerThroughConsole, useConsoleBrowser } from './harness/browser.js';

const { withConsole } = useConsoleBrowser();

type WorkflowBody = RequestBody<'/api/v1/workflows', 'post'>;

/** A refund: above 100 it waits for an approval, then ends; nothing outside the platform is called. */
const REFUNDS: WorkflowBody = {
  name: 'Refunds',
  nodes: [
    { id: 'check', type: 'condition', config: { rules: [{ if: 'input.amount > 100', goto: 'approve' }, { else: 'done' }] } },
    { id: 'approve', type: 'approval', config: { message: 'Refund {{ input.amount }} EUR?' } },
    { id: 'done', type: 'condition', config: { rules: [] } },
  ],
  edges: [
    { source: 'check', target: 'approve' },
    { source: 'check', target: 'done' },
    { source: 'approve', target: 'done' },
  ],
};

async function createWorkflow(client: AgentPlatformClient, body: WorkflowBody = REFUNDS): Promise<string> {
  const { data, response } = await client.POST('/api/v1/workflows', { body });
  expect(response.status).toBe(201);
  return data!.id;
}

async function execute(client: AgentPlatformClient, workflowId: string, input: Record<string, unknown>): Promise<string> {
  const { data, response } = await client.POST('/api/v1/workflows/{workflow_id}/execute', { params: { path: { workflow_id: workflowId } }, body: { input } });
  expect(response.status).toBe(202);
  return data!.execution_id;
}

/** A drawn node, by what a screen reader calls it: "<type> <id>…". */
const graphNode = (page: Page, type: string, id: string) => page.getByRole('button', { name: new RegExp(`^${type} ${id}\\b`) });
const drawnNodes = (page: Page) => page.locator('.react-flow__node');
const facts = (page: Page, term: string) => page.locator('dl.facts').first().locator(`dt:text-is("${term}") + dd`);

describe('workflows in the console', () => {
  it('creates a workflow with an approval node through the JSON editor and draws every node, each one selectable', async () => {
    await withConsole(async ({ page }) => {
      await registerThroughConsole(page);
      await page.getByRole('link', { name: 'Workflows' }).click();
      await page.getByText('No workflows yet').waitFor();
      await checkPage(page, 'workflows-empty');

      await page.getByRole('button', { name: 'New workflow' }).click();
      await page.getByLabel('Name', { exact: true }).fill('Refunds');
      await page.getByLabel('Description').fill('Asks before refunding more than 100 EUR');
      // The editor starts from a small valid graph that holds an approval node, drawn beside it.
      const graphJson = page.getByLabel('Graph (JSON: nodes and edges)');
      expect(await graphJson.inputValue()).toContain('"type": "approval"');
      await expect.poll(() => drawnNodes(page).count()).toBe(3);
      await checkPage(page, 'workflows-create');
      await page.getByRole('button', { name: 'Create workflow' }).click();

      await page.getByRole('heading', { name: 'Refunds', level: 1 }).waitFor();
      await expect.poll(() => drawnNodes(page).count()).toBe(3);
      for (const [type, id] of [['condition', 'check'], ['approval', 'approve'], ['condition', 'done']] as const) {
        await graphNode(page, type, id).waitFor();
        expect(await graphNode(page, type, id).textContent()).toContain(id);
      }
      // Selecting by click shows the node's config…
      await graphNode(page, 'approval', 'approve').click();
      await page.getByRole('heading', { name: 'Node approve · approval' }).waitFor();
      expect(await page.locator('.wf-node-details pre').textContent()).toContain('Refund {{ input.amount }} EUR?');
      // …and so does the keyboard: Tab to a node, Enter.
      await graphNode(page, 'condition', 'check').focus();
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { name: 'Node check · condition' }).waitFor();
      expect(await page.locator('.wf-node-details pre').textContent()).toContain('input.amount > 100');
      expect(await facts(page, 'Status').textContent()).toBe('draft');
      expect(await facts(page, 'Trigger').textContent()).toBe('manual');
      await checkPage(page, 'workflows-graph');

      await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Workflows' }).click();
      const row = page.getByRole('row', { name: /Refunds/ });
      await row.waitFor();
      expect(await row.getByRole('cell').allTextContents()).toEqual(['Refunds', 'draft', 'manual', '1', 'never', expect.any(String)]);
      await checkPage(page, 'workflows-list');
    });
  });

  it('marks the node the API refused, saves a valid change as a new version and restores the previous one', async () => {
    await withConsole(async ({ page }) => {
      const client = await clientFor(await registerThroughConsole(page));
      const workflowId = await createWorkflow(client);
      await page.goto(`/console/workflows/${workflowId}?tab=edit`);
      const editor = page.getByLabel('Definition (JSON)');
      await editor.waitFor();
      const definition = JSON.parse(await editor.inputValue()) as { name: string; nodes: { id: string; type: string; config: Record<string, unknown> }[]; edges: { source: string; target: string }[] };
      expect(definition).toMatchObject({ name: 'Refunds', nodes: REFUNDS.nodes, edges: REFUNDS.edges });

      const refused = structuredClone(definition);
      refused.nodes[1]!.config.timeout_seconds = 0;
      await editor.fill(JSON.stringify(refused, null, 2));
      await page.getByRole('button', { name: 'Save' }).click();
      // In the error list, and on the node itself: marked, with its message.
      await expect.poll(() => page.getByRole('alert').textContent()).toContain('nodes[1].config.timeout_seconds');
      const refusedNode = graphNode(page, 'approval', 'approve');
      await expect.poll(() => refusedNode.getAttribute('aria-invalid')).toBe('true');
      expect(await refusedNode.textContent()).toContain('config.timeout_seconds must be an integer from 1');
      expect(await graphNode(page, 'condition', 'check').getAttribute('aria-invalid')).toBeNull();
      expect(await editor.getAttribute('aria-invalid')).toBe('true');
      await checkPage(page, 'workflows-editor-errors');

      const changed = structuredClone(definition);
      changed.nodes.push({ id: 'later', type: 'wait', config: { seconds: 1 } });
      changed.edges.push({ source: 'done', target: 'later' });
      await editor.fill(JSON.stringify(changed, null, 2));
      await page.getByRole('button', { name: 'Save' }).click();
      await page.getByRole('status').filter({ hasText: 'Saved: Refunds is at version 2.' }).waitFor();
      expect(await refusedNode.getAttribute('aria-invalid')).toBeNull();
      await expect.poll(() => facts(page, 'Version').textContent()).toBe('2');

      await page.getByRole('link', { name: 'Versions' }).click();
      await page.getByRole('link', { name: 'View version 1' }).click();
      await page.getByRole('heading', { name: 'Version 1', level: 3 }).waitFor();
      await expect.poll(() => page.locator('.wf-version .react-flow__node').count()).toBe(3);
      expect(await page.getByRole('row').allTextContents()).toEqual([expect.stringContaining('Version'), expect.stringMatching(/^Version 2 current/), expect.stringMatching(/^Version 1/)]);
      await checkPage(page, 'workflows-versions');

      await page.getByRole('button', { name: 'Restore version 1' }).click();
      await page.getByRole('status').filter({ hasText: 'Restored version 1 as version 3.' }).waitFor();
      await expect.poll(() => facts(page, 'Version').textContent()).toBe('3');
      await page.getByRole('link', { name: 'Graph', exact: true }).click();
      await expect.poll(() => drawnNodes(page).count()).toBe(3);
      expect(await graphNode(page, 'wait', 'later').count()).toBe(0);
    });
  });

  it('pauses and resumes, runs with an input, and approves the waiting node while the run completes live', async () => {
    await withConsole(async ({ page }) => {
      const client = await clientFor(await registerThroughConsole(page));
      const workflowId = await createWorkflow(client);
      await page.goto(`/console/workflows/${workflowId}`);
      await page.getByRole('heading', { name: 'Refunds', level: 1 }).waitFor();

      await page.getByRole('button', { name: 'Pause' }).click();
      await expect.poll(() => facts(page, 'Status').textContent()).toBe('paused');
      await page.getByRole('button', { name: 'Resume' }).click();
      await expect.poll(() => facts(page, 'Status').textContent()).toBe('active');
      expect(await page.getByRole('button', { name: 'Pause' }).isVisible()).toBe(true);

      await page.getByRole('button', { name: 'Run' }).click();
      await page.getByLabel('Input (JSON)').fill('{ "amount": 250 }');
      await page.getByRole('button', { name: 'Start run' }).click();
      await page.getByRole('heading', { name: 'Execution of Refunds', level: 1 }).waitFor();
      expect(page.url()).toMatch(new RegExp(`/console/workflows/${workflowId}/executions/exe_[0-9A-Z]{26}$`));
      // A mark on the window: had the page been reloaded, it would be gone.
      await page.evaluate(() => {
        Object.assign(globalThis, { notReloaded: true });
      });

      const approval = page.getByRole('group', { name: 'Approval of approve' });
      await approval.getByText('Refund 250 EUR?').waitFor();
      const timelineItem = (nodeId: string) => page.getByRole('listitem').filter({ has: page.getByRole('heading', { name: new RegExp(`\\b${nodeId}\\b`), level: 3 }) });
      expect(await timelineItem('approve').getByRole('heading').textContent()).toMatch(/^waiting approve/);
      expect(await timelineItem('check').getByRole('heading').textContent()).toMatch(/^completed check/);
      expect(await facts(page, 'Status').textContent()).toContain('waiting');
      await expect.poll(() => page.locator('.wf-timeline .json-view').count()).toBeGreaterThan(0);
      await checkPage(page, 'workflows-execution-waiting');

      await approval.getByLabel('Comment (optional)').fill('fine by finance');
      await approval.getByRole('button', { name: 'Approve', exact: true }).click();
      // Live: the page reads the execution again until it completes, without a reload.
      await expect.poll(() => page.getByTestId('execution-status').textContent(), { timeout: 20_000 }).toBe('completed');
      await expect.poll(() => timelineItem('done').getByRole('heading').textContent()).toMatch(/^completed done/);
      expect(await timelineItem('approve').getByRole('heading').textContent()).toMatch(/^completed approve/);
      expect(await page.getByRole('button', { name: 'Approve', exact: true }).count()).toBe(0);
      expect(await page.evaluate(() => (globalThis as { notReloaded?: boolean }).notReloaded)).toBe(true);
      await timelineItem('approve').getByText('Output').click();
      expect(await timelineItem('approve').locator('pre').last().textContent()).toContain('"comment": "fine by finance"');
      await checkPage(page, 'workflows-execution-completed');
    });
  });

  it('cancels a waiting run from its page and filters the executions by status; deletes the workflow once confirmed', async () => {
    await withConsole(async ({ page }) => {
      const client = await clientFor(await registerThroughConsole(page));
      const workflowId = await createWorkflow(client);
      const waiting = await execute(client, workflowId, { amount: 500 });
      const small = await execute(client, workflowId, { amount: 20 });

      await page.goto(`/console/workflows/${workflowId}/executions/${waiting}`);
      await page.getByRole('group', { name: 'Approval of approve' }).waitFor();
      await page.getByRole('button', { name: 'Cancel', exact: true }).click();
      await page.getByRole('button', { name: 'Cancel the execution' }).click();
      await expect.poll(() => page.getByTestId('execution-status').textContent()).toBe('cancelled');
      expect(await page.getByRole('group', { name: 'Approval of approve' }).count()).toBe(0);
      expect(await page.getByRole('button', { name: 'Cancel', exact: true }).count()).toBe(0);

      await page.getByRole('link', { name: 'Executions', exact: true }).click();
      await page.getByRole('heading', { name: 'Executions of Refunds', level: 1 }).waitFor();
      const rows = page.getByRole('row').filter({ has: page.getByRole('link', { name: /^exe_/ }) });
      await expect.poll(() => rows.count()).toBe(2);
      await checkPage(page, 'workflows-executions');

      const filter = page.getByLabel('Status');
      await filter.selectOption('cancelled');
      await expect.poll(() => rows.allTextContents()).toEqual([expect.stringContaining(waiting)]);
      expect(new URL(page.url()).searchParams.get('status')).toBe('cancelled');
      await filter.selectOption('completed');
      await expect.poll(() => rows.allTextContents()).toEqual([expect.stringContaining(small)]);
      await filter.selectOption('waiting');
      await page.getByText('No waiting executions').waitFor();
      await page.reload();
      await page.getByText('No waiting executions').waitFor();
      await filter.selectOption('');
      await expect.poll(() => rows.count()).toBe(2);

      await page.getByRole('link', { name: 'Refunds' }).click();
      await page.getByRole('button', { name: 'Delete', exact: true }).click();
      await page.getByRole('button', { name: 'Delete for good' }).click();
      await page.getByText('No workflows yet').waitFor();
    });
  });

  it('pages through executions by cursor, one page per request, each page in the URL', async () => {
    await withConsole(async ({ page }) => {
      const client = await clientFor(await registerThroughConsole(page));
      const workflowId = await createWorkflow(client, { name: 'Quick', nodes: [{ id: 'only', type: 'condition', config: { rules: [] } }], edges: [] });
      const started: string[] = [];
      for (let run = 0; run < 23; run++) started.push(await execute(client, workflowId, { run }));

      const listRequests: string[] = [];
      page.on('request', (request) => {
        if (request.url().includes(`/api/v1/workflows/${workflowId}/executions?`)) listRequests.push(request.url());
      });
      await page.goto(`/console/workflows/${workflowId}/executions`);
      const rows = page.getByRole('row').filter({ has: page.getByRole('link', { name: /^exe_/ }) });
      await expect.poll(() => rows.count()).toBe(20);
      // Newest first.
      expect(await rows.first().textContent()).toContain(started.at(-1));
      expect(listRequests.every((url) => new URL(url).searchParams.get('limit') === '20')).toBe(true);

      await page.getByRole('button', { name: 'Next' }).click();
      await expect.poll(() => rows.count()).toBe(3);
      expect(await rows.last().textContent()).toContain(started[0]);
      expect(new URL(page.url()).searchParams.get('cursor')).toBeTruthy();
      expect(await page.getByRole('button', { name: 'Next' }).isDisabled()).toBe(true);
      await page.reload();
      await expect.poll(() => rows.count()).toBe(3);
      await page.getByRole('button', { name: 'Previous' }).click();
      await expect.poll(() => rows.count()).toBe(20);
      expect(new URL(page.url()).searchParams.get('cursor')).toBeNull();
      expect(await page.getByRole('button', { name: 'Previous' }).isDisabled()).toBe(true);
    });
  });
});
