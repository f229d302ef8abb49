import type { AgentPlatformClient } from '@agent-platform/client';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { checkPage, clientFor, registerThroughConsole, useConsoleBrowser } from './harness/browser.js';

const { withConsole } = useConsoleBrowser();

async function datasetItems(api: AgentPlatformClient, datasetId: string) {
  const { data, response } = await api.GET('/api/v1/datasets/{dataset_id}/items', { params: { path: { dataset_id: datasetId }, query: { limit: 100 } } });
  expect(response.status).toBe(200);
  return data!;
}

/** The POSTs of items the page sends, as they are sent. */
function itemPosts(page: Page): string[] {
  const posts: string[] = [];
  page.on('request', (request) => {
    if (request.method() === 'POST' && /\/api\/v1\/datasets\/[^/]+\/items$/.test(new URL(request.url()).pathname)) posts.push(request.postData() ?? '');
  });
  return posts;
}

const itemRows = (page: Page) => page.getByRole('region', { name: 'Item list' }).locator('tbody tr');

describe('datasets in the console', () => {
  it('creates a dataset, lists each bad line of a pasted CSV before sending anything, adds the fixed lines, and deletes the dataset', async () => {
    await withConsole(async ({ page }) => {
      const api = await clientFor(await registerThroughConsole(page));
      const posts = itemPosts(page);
      await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Datasets' }).click();
      await page.getByText('No datasets yet').waitFor();
      await checkPage(page, 'datasets-empty');

      await page.getByRole('button', { name: 'New dataset' }).click();
      await page.getByLabel('Name', { exact: true }).fill('Refund questions');
      await page.getByLabel('Description').fill('What customers ask about refunds.');
      await page.getByRole('button', { name: 'Create dataset' }).click();
      await page.getByRole('heading', { name: 'Refund questions', level: 1 }).waitFor();
      await page.getByText('No items yet').waitFor();
      const datasetId = new URL(page.url()).pathname.split('/').at(-1)!;

      await page.getByRole('button', { name: 'Add from CSV or JSONL' }).click();
      const box = page.getByLabel('Items to add', { exact: true });
      // Quoted fields may hold commas and line breaks; line 3 has no message, line 6 a field too many.
      await box.fill(
        [
          'message,expected,user_id',
          '"Can I get a refund after 40 days?","No, refunds are within 30 days.",customer-8812',
          ',Nothing to ask,',
          '"How do I return a gift?',
          'With a receipt?",Use the gift receipt number.,',
          'Where is my parcel?,,customer-9,extra',
        ].join('\n'),
      );
      const mistakes = page.getByRole('list', { name: 'Lines to fix' });
      await expect.poll(() => mistakes.getByRole('listitem').allTextContents()).toEqual(['Line 3: message is empty', 'Line 6: has 4 fields; the header names 3']);
      expect(await page.getByRole('button', { name: 'Add items' }).isDisabled()).toBe(true);
      expect(await box.getAttribute('aria-invalid')).toBe('true');
      expect(posts).toEqual([]);
      await checkPage(page, 'dataset-import-errors');

      const fixed = (await box.inputValue()).replace(',Nothing to ask,', 'Is shipping refunded?,Only when we made a mistake.,').replace(',customer-9,extra', ',customer-9');
      await box.fill(fixed);
      await expect.poll(() => mistakes.count()).toBe(0);
      await page.getByText('4 items ready to add, in one batch.').waitFor();
      await page.getByRole('button', { name: 'Add 4 items' }).click();
      await page.getByRole('status').filter({ hasText: 'Added 4 items.' }).waitFor();
      expect(posts).toHaveLength(1);
      expect(await box.inputValue()).toBe('');
      await expect.poll(() => itemRows(page).count()).toBe(4);

      // Stored as sent: a batch keeps its order, and the list reads it newest first (reversed).
      const stored = await datasetItems(api, datasetId);
      expect(stored.total).toBe(4);
      expect(stored.items.toReversed().map((item) => [item.input.message, item.expected, item.input.user_id])).toEqual([
        ['Can I get a refund after 40 days?', 'No, refunds are within 30 days.', 'customer-8812'],
        ['Is shipping refunded?', 'Only when we made a mistake.', null],
        ['How do I return a gift?\nWith a receipt?', 'Use the gift receipt number.', null],
        ['Where is my parcel?', null, 'customer-9'],
      ]);
      await checkPage(page, 'dataset-items');

      // An uploaded JSONL file: its format follows its name; a limit only the API knows (an end
      // user id over 128 characters) is refused by it, shown on its line, and nothing is stored.
      await page.getByLabel('Upload a file').setInputFiles({
        name: 'more.jsonl',
        mimeType: 'application/x-ndjson',
        buffer: Buffer.from(['{"input": {"message": "Can I swap sizes?"}, "metadata": {"topic": "returns"}}', '', `{"input": {"message": "And colours?", "user_id": "${'u'.repeat(129)}"}}`].join('\n')),
      });
      await expect.poll(() => page.getByRole('radio', { name: /JSONL/ }).isChecked()).toBe(true);
      await page.getByRole('button', { name: 'Add 2 items' }).click();
      const refused = page.getByRole('list', { name: 'Lines refused' });
      await expect.poll(() => refused.textContent()).toContain('Line 3: input.user_id');
      await expect.poll(() => page.getByRole('alert').first().textContent()).toContain('nothing of it was stored');
      expect((await datasetItems(api, datasetId)).total).toBe(4);
      await checkPage(page, 'dataset-import-refused');

      await box.fill('{"input": {"message": "Can I swap sizes?"}, "metadata": {"topic": "returns"}}');
      await page.getByRole('button', { name: 'Add 1 item' }).click();
      await page.getByRole('status').filter({ hasText: 'Added 1 item.' }).waitFor();
      await expect.poll(() => itemRows(page).count()).toBe(5);
      expect((await datasetItems(api, datasetId)).items[0]).toMatchObject({ input: { message: 'Can I swap sizes?', user_id: null }, metadata: { topic: 'returns' } });

      // One item through its form.
      await page.getByRole('button', { name: 'Add an item' }).click();
      await page.getByLabel('Message', { exact: true }).fill('Do you refund gift cards?');
      await page.getByLabel('Expected answer (optional)').fill('No.');
      await page.getByRole('button', { name: 'Add item' }).click();
      await page.getByRole('status').filter({ hasText: 'Added an item' }).waitFor();
      await expect.poll(() => itemRows(page).count()).toBe(6);
      expect((await datasetItems(api, datasetId)).items[0]).toMatchObject({ input: { message: 'Do you refund gift cards?' }, expected: 'No.' });

      await page.getByRole('link', { name: 'Datasets', exact: true }).first().click();
      const row = page.getByRole('row', { name: /Refund questions/ });
      await expect.poll(() => row.getByRole('cell').nth(2).textContent()).toBe('6');
      await checkPage(page, 'datasets');
      await page.getByRole('button', { name: 'Delete Refund questions' }).click();
      await page.getByRole('button', { name: 'Delete dataset' }).click();
      await page.getByText('No datasets yet').waitFor();
      const { data: left } = await api.GET('/api/v1/datasets', {});
      expect(left!.total).toBe(0);
    });
  });
});
