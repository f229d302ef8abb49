import { createClient, type AgentPlatformClient } from '@agent-platform/client';
import type { Page } from 'playwright-core';
import { describe, expect, inject, it } from 'vitest';
import { checkPage, clientFor, registerThroughConsole, useConsoleBrowser } from './harness/browser.js';

const { withConsole } = useConsoleBrowser();

/** A new account signed in to the console, with one agent (made through the typed client: setup, not the point). */
async function signedInWithAgent(page: Page): Promise<{ client: AgentPlatformClient; agentId: string }> {
  const client = await clientFor(await registerThroughConsole(page));
  const { data: agent } = await client.POST('/api/v1/agents', { body: { name: 'Support bot', type: 'support', memory_types: ['semantic', 'episodic'] } });
  return { client, agentId: agent!.id };
}

async function addItem(client: AgentPlatformClient, item: { agent_id: string; content: string; memory_type?: 'semantic' | 'episodic'; metadata?: Record<string, unknown>; user_id?: string }): Promise<string> {
  const { data } = await client.POST('/api/v1/memory', { body: { memory_type: 'semantic', ...item } });
  return data!.id;
}

/** The contents the list (or a search) shows now, in its order. */
function listed(page: Page, table: RegExp = /newest first/): Promise<string[]> {
  return page.getByRole('table', { name: table }).getByRole('link').allTextContents();
}

/** The text of each row of the open item's history, oldest first. */
function historyRows(page: Page): Promise<string[]> {
  return page.getByRole('table', { name: 'Every change, oldest first' }).locator('tbody tr').allTextContents();
}

async function fieldMessage(page: Page, control: ReturnType<Page['getByLabel']>): Promise<string> {
  const describedBy = (await control.getAttribute('aria-describedby')) ?? '';
  return (await page.locator(`[id="${describedBy.split(' ').at(-1)}"]`).textContent()) ?? '';
}

describe('memory (issue point 3)', () => {
  it('adds items through the form, lists them with their metadata, and filters by type and end user', async () => {
    await withConsole(async ({ page }) => {
      const { agentId } = await signedInWithAgent(page);
      await page.getByRole('link', { name: 'Memory' }).click();
      // The tenant's only agent is picked by itself, and the address says so.
      await page.getByText('No memory yet').waitFor();
      expect(new URL(page.url()).searchParams.get('agent_id')).toContain(agentId);
      expect(await page.getByText('extracted into semantic memory').count()).toBe(1);
      await checkPage(page, 'memory-empty');

      await page.getByRole('button', { name: 'Add item' }).click();
      const form = page.getByRole('form', { name: 'Add a memory item' });
      // Blank content: the API's own message, on its field.
      await form.getByLabel('Content').fill('   ');
      await form.getByRole('button', { name: 'Add to memory' }).click();
      const content = form.getByLabel('Content');
      await expect.poll(() => content.getAttribute('aria-invalid')).toBe('true');
      expect(await fieldMessage(page, content)).toMatch(/not blank/);
      await expect.poll(() => form.getByRole('alert').textContent()).toContain('validation_error');
      await checkPage(page, 'memory-add-invalid');

      // Metadata that is not JSON is caught before anything is sent.
      await content.fill('I prefer email over phone calls');
      await form.getByLabel('Memory type').selectOption('semantic');
      await form.getByLabel('End user').fill('user-42');
      const metadata = form.getByLabel('Metadata');
      await metadata.fill('{"source": crm}');
      await form.getByRole('button', { name: 'Add to memory' }).click();
      await expect.poll(() => metadata.getAttribute('aria-invalid')).toBe('true');
      expect(await fieldMessage(page, metadata)).toMatch(/not valid JSON/);
      expect(await content.getAttribute('aria-invalid')).toBeNull();

      await metadata.fill('{"source": "crm", "priority": 2}');
      await form.getByRole('button', { name: 'Add to memory' }).click();
      await form.waitFor({ state: 'detached' });
      await expect.poll(() => listed(page)).toEqual(['I prefer email over phone calls']);

      await page.getByRole('button', { name: 'Add item' }).click();
      await form.getByLabel('Content').fill('The account was opened in March');
      await form.getByLabel('Memory type').selectOption('episodic');
      await form.getByRole('button', { name: 'Add to memory' }).click();
      await expect.poll(() => listed(page)).toEqual(['The account was opened in March', 'I prefer email over phone calls']);

      const first = page.getByRole('row').filter({ hasText: 'I prefer email' });
      expect(await first.textContent()).toContain('user-42');
      expect(await first.getByRole('listitem').allTextContents()).toEqual(['source: crm', 'priority: 2']);
      expect(await page.getByRole('row').filter({ hasText: 'opened in March' }).textContent()).toContain('shared');
      await checkPage(page, 'memory-list');

      const filters = page.getByRole('form', { name: 'Filter memory' });
      await filters.getByLabel('Memory type').selectOption('episodic');
      await filters.getByRole('button', { name: 'Apply filters' }).click();
      await expect.poll(() => listed(page)).toEqual(['The account was opened in March']);
      expect(new URL(page.url()).searchParams.get('memory_type')).toContain('episodic');

      await filters.getByLabel('Memory type').selectOption('');
      await filters.getByLabel('End user').fill('user-42');
      await filters.getByRole('button', { name: 'Apply filters' }).click();
      await expect.poll(() => listed(page)).toEqual(['I prefer email over phone calls']);

      // The filters live in the address: a reload shows the same.
      await page.reload();
      await expect.poll(() => listed(page)).toEqual(['I prefer email over phone calls']);
      expect(await page.getByRole('form', { name: 'Filter memory' }).getByLabel('End user').inputValue()).toBe('user-42');

      await filters.getByLabel('End user').fill('nobody');
      await filters.getByRole('button', { name: 'Apply filters' }).click();
      await page.getByText('No items match these filters').waitFor();
      await page.getByRole('link', { name: 'Show every item' }).click();
      await expect.poll(() => listed(page)).toHaveLength(2);
    });
  });

  it('searches memory, showing each result with its score, and filters the search on metadata', async () => {
    await withConsole(async ({ page }) => {
      const { client, agentId } = await signedInWithAgent(page);
      await addItem(client, { agent_id: agentId, content: 'The customer prefers email for invoices', metadata: { source: 'crm' } });
      await addItem(client, { agent_id: agentId, content: 'Send the weekly report by email on Fridays', metadata: { source: 'notes' } });
      await addItem(client, { agent_id: agentId, content: 'The office is closed on public holidays' });

      await page.goto(`/console/memory?agent_id=${agentId}`);
      await expect.poll(() => listed(page)).toHaveLength(3);
      await page.getByRole('navigation', { name: 'Memory views' }).getByRole('link', { name: 'Search' }).click();
      const form = page.getByRole('search', { name: 'Search memory' });

      // An empty search is refused on its field, without a request.
      await form.getByRole('button', { name: 'Search' }).click();
      const query = form.getByLabel('Search for');
      await expect.poll(() => query.getAttribute('aria-invalid')).toBe('true');

      await query.fill('email');
      await form.getByRole('button', { name: 'Search' }).click();
      const results = page.getByRole('table', { name: /best matches/ });
      // Both items about email come first, each with its score in (0, 1], best first.
      await expect.poll(async () => (await listed(page, /best matches/)).slice(0, 2).sort()).toEqual(['Send the weekly report by email on Fridays', 'The customer prefers email for invoices']);
      const rows = (await results.getByRole('row').all()).slice(1);
      const scores = (await Promise.all(rows.map((row) => row.getByRole('cell').nth(1).textContent()))).map(Number);
      expect(scores[0]).toBeGreaterThan(0);
      expect(scores[0]).toBeLessThanOrEqual(1);
      expect(scores).toEqual([...scores].sort((a, b) => b - a));
      expect(await results.getByRole('columnheader', { name: 'Score' }).count()).toBe(1);
      await checkPage(page, 'memory-search');

      const filter = form.getByLabel('Metadata filter');
      await filter.fill('{"source": ["crm"]}');
      await form.getByRole('button', { name: 'Search' }).click();
      await expect.poll(() => filter.getAttribute('aria-invalid')).toBe('true');
      expect(await fieldMessage(page, filter)).toMatch(/string, a number or a boolean/);

      await filter.fill('{"source": "crm"}');
      await form.getByRole('button', { name: 'Search' }).click();
      await expect.poll(() => listed(page, /best matches/)).toEqual(['The customer prefers email for invoices']);
      expect(JSON.parse(new URL(page.url()).searchParams.get('filter') ?? '""')).toBe('{"source": "crm"}');

      // A value out of range is the API's to refuse: its message lands on the field.
      const minimum = form.getByLabel('Minimum score');
      await minimum.fill('2');
      await form.getByRole('button', { name: 'Search' }).click();
      await expect.poll(() => minimum.getAttribute('aria-invalid')).toBe('true');
      expect(await fieldMessage(page, minimum)).toMatch(/1/);
      await checkPage(page, 'memory-search-invalid');

      await minimum.fill('');
      await query.fill('volcanoes');
      await filter.fill('{"source": "nowhere"}');
      await form.getByRole('button', { name: 'Search' }).click();
      await page.getByText('Nothing found').waitFor();
    });
  });

  it("edits an item and shows its history; a deleted item leaves the list and keeps its history", async () => {
    await withConsole(async ({ page }) => {
      const { client, agentId } = await signedInWithAgent(page);
      await addItem(client, { agent_id: agentId, content: 'The customer lives in Lyon', user_id: 'user-7', metadata: { source: 'crm' } });
      await addItem(client, { agent_id: agentId, content: 'The customer has two cats' });

      await page.goto(`/console/memory?agent_id=${agentId}`);
      await page.getByRole('link', { name: 'The customer lives in Lyon' }).click();
      const panel = page.getByRole('region', { name: /Memory item/ });
      await expect.poll(() => historyRows(page)).toHaveLength(1);
      expect((await historyRows(page))[0]).toMatch(/^ADD—The customer lives in LyonAPI/);
      // Opening an item takes the keyboard to it.
      await expect.poll(() => page.locator(':focus').getAttribute('id')).toBe('memory-item-title');
      await checkPage(page, 'memory-item');

      await panel.getByRole('button', { name: 'Edit' }).click();
      const form = page.getByRole('form', { name: 'Edit item' });
      // Emptied content is refused before sending; blank content by the API: each on its field.
      const content = form.getByLabel('Content');
      await content.fill('');
      await form.getByRole('button', { name: 'Save changes' }).click();
      await expect.poll(() => content.getAttribute('aria-invalid')).toBe('true');
      expect(await fieldMessage(page, content)).toMatch(/not blank/);
      expect(await form.getByRole('alert').textContent()).toContain('nothing was sent');
      await content.fill('   ');
      await form.getByRole('button', { name: 'Save changes' }).click();
      await expect.poll(() => form.getByRole('alert').textContent()).not.toContain('nothing was sent');
      expect(await form.getByRole('alert').textContent()).toContain('validation_error');
      await expect.poll(() => fieldMessage(page, content)).toMatch(/not blank/);
      await checkPage(page, 'memory-edit-invalid');

      await form.getByLabel('Content').fill('The customer lives in Paris');
      await form.getByLabel('Metadata').fill('{"source": "crm", "verified": true}');
      await form.getByRole('button', { name: 'Save changes' }).click();
      await form.waitFor({ state: 'detached' });
      await expect.poll(() => historyRows(page)).toHaveLength(2);
      const [added, updated] = await historyRows(page);
      expect(added).toMatch(/^ADD—The customer lives in Lyon/);
      expect(updated).toMatch(/^UPDATEThe customer lives in LyonThe customer lives in ParisAPI/);
      await expect.poll(() => listed(page)).toContain('The customer lives in Paris');
      expect(await panel.getByRole('listitem').allTextContents()).toEqual(['source: crm', 'verified: true']);

      await panel.getByRole('button', { name: 'Delete' }).click();
      // Nothing is deleted until it is confirmed.
      await panel.getByRole('button', { name: 'Keep it' }).click();
      expect(await listed(page)).toHaveLength(2);
      await panel.getByRole('button', { name: 'Delete' }).click();
      await panel.getByRole('button', { name: 'Delete item' }).click();
      await expect.poll(() => listed(page)).toEqual(['The customer has two cats']);
      // The API keeps a deleted item's history, readable by id (decisions §14).
      await expect.poll(() => historyRows(page)).toHaveLength(3);
      expect((await historyRows(page))[2]).toMatch(/^DELETEThe customer lives in Paris—API/);
      await panel.getByText('This item was deleted').waitFor();
      expect(await panel.getByRole('button', { name: 'Edit' }).count()).toBe(0);
      await checkPage(page, 'memory-item-deleted');

      // The open item is in the address: a reload shows its history again.
      await page.reload();
      await expect.poll(() => historyRows(page)).toHaveLength(3);
      await panel.getByRole('link', { name: 'Close' }).click();
      await panel.waitFor({ state: 'detached' });
    });
  });

  it("pages through an agent's memory filled by a document", async () => {
    await withConsole(async ({ page }) => {
      const { client, agentId } = await signedInWithAgent(page);
      const paragraphs = Array.from({ length: 24 }, (_, index) => `Section ${index + 1}. ${'The handbook explains the support process in detail. '.repeat(16)}`);
      const { data: document } = await client.POST('/api/v1/memory/documents', { body: { agent_id: agentId, title: 'Handbook', content: paragraphs.join('\n\n') } });
      expect(document!.chunks).toBeGreaterThan(20);

      await page.goto(`/console/memory?agent_id=${agentId}`);
      await expect.poll(() => listed(page)).toHaveLength(20);
      const pager = page.getByRole('navigation', { name: 'Pages' });
      expect(await pager.textContent()).toContain('Page 1 of 2');
      expect(await page.getByRole('row').nth(1).getByRole('listitem').allTextContents()).toContain(`document_id: ${document!.id}`);
      await pager.getByRole('button', { name: 'Next' }).click();
      await expect.poll(() => listed(page)).toHaveLength(document!.chunks - 20);
      expect(new URL(page.url()).searchParams.get('page')).toBe('2');
    });
  });

  it("shows the API's not_found for a missing agent, or one of another tenant", async () => {
    await withConsole(async ({ page }) => {
      await signedInWithAgent(page);
      const stranger = { email: `stranger-${Date.now()}@example.com`, password: 'correct horse battery staple' };
      await createClient({ baseUrl: inject('baseUrl') }).POST('/api/v1/auth/register', { body: { ...stranger, company: 'Elsewhere' } });
      const strangerClient = await clientFor(stranger);
      const { data: foreign } = await strangerClient.POST('/api/v1/agents', { body: { name: 'Foreign agent', type: 'assistant' } });

      for (const agentId of ['agt_00000000000000000000000000', foreign!.id]) {
        await page.goto(`/console/memory?agent_id=${agentId}`);
        const alert = page.getByRole('alert');
        await expect.poll(() => alert.textContent()).toContain('not_found');
        expect(await page.getByLabel('Agent').inputValue()).toBe(agentId);
        expect(await page.getByRole('button', { name: 'Add item' }).count()).toBe(0);
      }
      await checkPage(page, 'memory-agent-not-found');
      // Picking one of the tenant's own agents leaves the error behind.
      await page.getByLabel('Agent').selectOption({ label: 'Support bot' });
      await page.getByText('No memory yet').waitFor();
    });
  });
});
