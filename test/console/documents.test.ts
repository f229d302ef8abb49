import { readFile } from 'node:fs/promises';
import type { AgentPlatformClient } from '@agent-platform/client';
import { startReceiver, type Receiver } from '@agent-platform/kit/testing';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOCUMENT_TITLE, multiPagePdf, pngBytes, sampleCsv } from '../../services/agent-memory/test/fixtures/documents.js';
import { checkPage, clientFor, registerThroughConsole, useConsoleBrowser } from './harness/browser.js';

const { withConsole } = useConsoleBrowser();

/** A help page the import fetches; held when a test wants to see the document processing first. */
let site: Receiver;
let pageText = 'Refunds are accepted within 30 days of delivery.';
beforeAll(async () => {
  site = await startReceiver(() => ({
    headers: { 'content-type': 'text/html' },
    body: `<html><head><title>Returns help</title></head><body><nav>Home · Shop · Help</nav><main><h1>Returns</h1><p>${pageText}</p></main></body></html>`,
    hold: 'answer',
  }));
});
afterAll(() => site.close());

/** A new account in the console, with an agent that keeps semantic memory, on its Documents tab. */
async function onDocumentsTab(page: Page): Promise<{ client: AgentPlatformClient; agentId: string }> {
  const client = await clientFor(await registerThroughConsole(page));
  const { data: agent } = await client.POST('/api/v1/agents', { body: { name: 'Librarian', type: 'assistant', config: { memory_extraction: false } } });
  await page.goto(`/console/memory?agent_id=${agent!.id}`);
  await page.getByRole('navigation', { name: 'Memory views' }).getByRole('link', { name: 'Documents' }).click();
  await page.getByRole('heading', { name: 'Upload files' }).waitFor();
  return { client, agentId: agent!.id };
}

const documentList = (page: Page) => page.getByRole('region', { name: 'Documents, newest first' });
const documentRow = (page: Page, name: string) => documentList(page).getByRole('row').filter({ hasText: name });

/**
 * Waits, with the list's own status text as the sentinel, for the document named `name` to be
 * read; what the list shows instead is in the failure.
 */
async function untilReady(page: Page, name: string): Promise<void> {
  const shown = async () => ((await documentRow(page, name).getByText('Ready').count()) > 0 ? 'Ready' : await page.locator('main').textContent());
  await expect.poll(shown, { timeout: 30_000 }).toBe('Ready');
}

const fileInput = (page: Page) => page.getByLabel('Files to upload');

/** Chooses a file from the keyboard (the button, then the dialog), and waits for the list to show it read: the status text is the sentinel. */
async function uploadAndWait(page: Page, file: { name: string; mimeType: string; buffer: Buffer }, title: string): Promise<void> {
  // Waited for before the key goes, so the dialog is intercepted rather than opened.
  const dialog = page.waitForEvent('filechooser');
  await page.getByRole('button', { name: 'Choose files' }).press('Enter');
  await (await dialog).setFiles(file);
  await untilReady(page, title);
}

describe('documents in the console', () => {
  it('uploads through the file input and by a drop with a progress bar each, lists them until ready, refuses what the API refuses, and shows, downloads and deletes a document', async () => {
    await withConsole(async ({ page, context }) => {
      await onDocumentsTab(page);
      await page.getByText('No documents yet').waitFor();
      await checkPage(page, 'documents-empty');

      // A padded PDF sent slowly: its bar is seen part way before the upload ends. The network is
      // set back only once it has ended (uploads under a changing network: upload-stress.test.ts).
      const pdf = await multiPagePdf({ pages: 3, paddingBytes: 256 * 1024 });
      const cdp = await context.newCDPSession(page);
      await cdp.send('Network.enable');
      await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: 128 * 1024 });
      await fileInput(page).setInputFiles({ name: 'handbook.pdf', mimeType: 'application/pdf', buffer: pdf });
      await page.waitForFunction(uploadPartWay, undefined, { polling: 'raf', timeout: 20_000 });
      const uploads = page.getByRole('list', { name: 'Uploads' });
      await uploads.getByRole('listitem').filter({ hasText: 'handbook.pdf' }).getByText('Uploaded', { exact: true }).waitFor({ timeout: 20_000 });
      await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 });

      // Dropped on the area, as a file manager drops it.
      const dropped = await page.evaluateHandle(transferOf, { name: 'prices.csv', type: 'text/csv', text: sampleCsv() });
      await page.getByRole('group', { name: 'Upload files' }).dispatchEvent('drop', { dataTransfer: dropped });

      // A PNG named as a PDF: the API's 422 unsupported_document, on its own upload.
      await fileInput(page).setInputFiles({ name: 'scan.pdf', mimeType: 'application/pdf', buffer: pngBytes() });
      const refused = uploads.getByRole('listitem').filter({ hasText: 'scan.pdf' });
      await expect.poll(() => refused.getByRole('alert').textContent()).toContain('unsupported_document');
      expect(await refused.getByRole('alert').textContent()).toContain('Could not upload scan.pdf');
      // One byte over the platform's 20 MiB: its 413, read after the whole upload was sent.
      await fileInput(page).setInputFiles({ name: 'huge.txt', mimeType: 'text/plain', buffer: Buffer.alloc(20 * 1_048_576 + 1, 'a') });
      const tooLarge = uploads.getByRole('listitem').filter({ hasText: 'huge.txt' });
      await expect.poll(() => tooLarge.getByRole('alert').textContent(), { timeout: 20_000 }).toContain('payload_too_large');

      // The list follows each upload from processing to ready without a reload.
      await untilReady(page, DOCUMENT_TITLE);
      await untilReady(page, 'prices.csv');
      expect(await uploads.getByText('Uploaded', { exact: true }).count()).toBe(2);
      const handbook = await documentRow(page, DOCUMENT_TITLE).getByRole('cell').allTextContents();
      expect(handbook).toEqual([DOCUMENT_TITLE, 'Ready', 'File', `${(pdf.length / 1024).toFixed(1)} KiB`, expect.stringMatching(/^[1-9]\d*$/), '3', expect.any(String)]);
      expect(await documentList(page).getByRole('row').count()).toBe(3);
      await checkPage(page, 'documents-list');

      await page.getByRole('link', { name: DOCUMENT_TITLE }).click();
      await page.getByRole('heading', { name: DOCUMENT_TITLE, level: 1 }).waitFor();
      const chunks = page.getByRole('list', { name: /^Chunks 1 to / });
      const second = chunks.getByRole('listitem').filter({ hasText: 'Fact 2-1' });
      await second.waitFor();
      expect(await second.textContent()).toContain(`p. 2${DOCUMENT_TITLE} › Section 2`);
      await checkPage(page, 'document-page');

      const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download original' }).click()]);
      expect(download.suggestedFilename()).toBe('handbook.pdf');
      expect((await readFile(await download.path())).equals(pdf)).toBe(true);

      // The page is in the address: a reload shows it again.
      await page.reload();
      await second.waitFor();

      await page.getByRole('link', { name: 'Documents of Librarian' }).click();
      await page.getByRole('link', { name: 'prices.csv' }).click();
      await page.getByRole('button', { name: 'Delete' }).click();
      await page.getByRole('button', { name: 'Delete document' }).click();
      await expect.poll(() => documentList(page).getByRole('row').count()).toBe(2);
      expect(await documentRow(page, 'prices.csv').count()).toBe(0);
    });
  });

  it('imports a page from an address, shows it processing until fetched, and fetches it again on Refresh', async () => {
    await withConsole(async ({ page }) => {
      await onDocumentsTab(page);
      const form = page.getByRole('form', { name: 'Import a web page' });
      const address = site.url('/help/returns');
      await form.getByLabel('Address').fill(address);

      // Seconds out of the API's range: its message, on the field.
      await form.getByLabel('Fetch it again').selectOption({ label: 'Every … seconds' });
      const seconds = form.getByLabel('Seconds between fetches');
      await seconds.fill('30');
      await form.getByRole('button', { name: 'Import page' }).click();
      await expect.poll(() => seconds.getAttribute('aria-invalid')).toBe('true');
      expect(await form.getByRole('alert').textContent()).toContain('validation_error');
      expect(await form.getByRole('alert').textContent()).not.toContain('nothing was sent');
      await checkPage(page, 'documents-import-invalid');

      await form.getByLabel('Fetch it again').selectOption({ label: 'Daily' });
      await form.getByRole('button', { name: 'Import page' }).click();
      // The site holds its answer: the list shows the page processing, under its address, until it has it.
      await documentRow(page, address).getByText('Processing').waitFor();
      await site.waitFor(1);
      expect(site.release()).toBe(1);
      await untilReady(page, 'Returns help');
      expect(await documentRow(page, 'Returns help').getByRole('cell', { name: 'Web page · daily' }).count()).toBe(1);

      await page.getByRole('link', { name: 'Returns help' }).click();
      const chunk = page.getByRole('list', { name: /^Chunks 1 to / }).getByRole('listitem').first();
      await expect.poll(() => chunk.textContent()).toContain('30 days');
      pageText = 'Refunds are accepted within 60 days of delivery.';
      await page.getByRole('button', { name: 'Refresh' }).click();
      await page.getByText('Processing').waitFor();
      await site.waitFor(2);
      site.release();
      await expect.poll(() => chunk.textContent(), { timeout: 30_000 }).toContain('60 days');
      await page.getByText('Ready').waitFor();
    });
  });

  it("shows a reply's citations in the playground, each linked to its chunk, which the document's page marks and a reload keeps", async () => {
    await withConsole(async ({ page }) => {
      const { client, agentId } = await onDocumentsTab(page);
      await uploadAndWait(page, { name: 'handbook.pdf', mimeType: 'application/pdf', buffer: await multiPagePdf({ pages: 3 }) }, DOCUMENT_TITLE);

      await page.goto(`/console/agents/${agentId}?tab=playground`);
      await page.getByLabel('Message', { exact: true }).fill('What is the restocking fee for a laptop?');
      await page.getByRole('button', { name: 'Send' }).click();
      const sources = page.getByRole('list', { name: /^Sources \(\d+\)$/ });
      const first = sources.getByRole('link').first();
      await first.waitFor();
      const label = (await first.textContent()) ?? '';
      expect(label).toMatch(new RegExp(`^\\[(\\d+)\\] ${DOCUMENT_TITLE} · p\\. \\d · ${DOCUMENT_TITLE} › Section \\d$`));
      // The answer cites the passage by the number the list gives it.
      const index = /^\[(\d+)\]/.exec(label)![1];
      expect(await page.getByRole('list', { name: 'Conversation' }).locator('.bubble-agent').textContent()).toContain(`[${index}]`);
      const snippet = (await sources.getByRole('listitem').first().locator('q').textContent()) ?? '';
      expect(snippet.length).toBeGreaterThan(20);
      await checkPage(page, 'playground-citations');

      // A reopened session shows them too (from its stored messages).
      await page.reload();
      await first.waitFor();
      expect(await first.textContent()).toBe(label);

      await first.click();
      await page.getByRole('heading', { name: DOCUMENT_TITLE, level: 1 }).waitFor();
      const cited = page.locator('li[aria-current="true"]');
      await cited.waitFor();
      expect(new URL(page.url()).searchParams.get('chunk')).toMatch(/^mem_/);
      expect(normalised(await cited.locator('.chunk-text').textContent())).toContain(snippet.replace(/…$/, ''));
      await expect.poll(() => page.locator(':focus').getAttribute('aria-current')).toBe('true');
      expect(await cited.isVisible()).toBe(true);
      await checkPage(page, 'document-cited-chunk');

      await page.reload();
      await cited.waitFor();
      expect(normalised(await cited.locator('.chunk-text').textContent())).toContain(snippet.replace(/…$/, ''));
      await expect.poll(() => page.locator(':focus').getAttribute('aria-current')).toBe('true');

      // A chunk past the first page of a long document: its page is found and shown, and paging keeps the mark.
      const sections = Array.from({ length: 30 }, (_, index) => `Section ${index + 1}. ${'The handbook explains the support process in detail. '.repeat(16)}`);
      const { data: long } = await client.POST('/api/v1/memory/documents', { body: { agent_id: agentId, title: 'Support manual', content: sections.join('\n\n') } });
      const { data: listed } = await client.GET('/api/v1/memory/documents/{document_id}/chunks', { params: { path: { document_id: long!.id }, query: { page: 2, per_page: 20 } } });
      const far = listed!.items[3]!;
      await page.goto(`/console/memory/documents/${long!.id}?chunk=${far.id}`);
      await cited.waitFor();
      expect(await cited.locator('.chunk-number').textContent()).toBe(`Chunk ${far.position + 1}`);
      expect(await page.getByRole('navigation', { name: 'Pages' }).textContent()).toContain('Page 2 of');
      await page.getByRole('navigation', { name: 'Pages' }).getByRole('button', { name: 'Previous' }).click();
      await page.getByRole('list', { name: /^Chunks 1 to 20 of / }).waitFor();
      expect(await cited.count()).toBe(0);
      await page.getByRole('navigation', { name: 'Pages' }).getByRole('button', { name: 'Next' }).click();
      await cited.waitFor();
    });
  });
});

/** Runs in the page: whether an upload's bar shows it part way. */
function uploadPartWay(): boolean {
  const { document } = globalThis as unknown as { document: { querySelectorAll: (selector: string) => Iterable<{ value: number; max: number }> } };
  return [...document.querySelectorAll('progress')].some((bar) => bar.value > 0 && bar.value < bar.max);
}

/** Runs in the page: what a drag from a file manager carries, one file. */
function transferOf(file: { name: string; type: string; text: string }): unknown {
  const { DataTransfer, File } = globalThis as unknown as {
    DataTransfer: new () => { items: { add: (file: unknown) => void } };
    File: new (parts: string[], name: string, options: { type: string }) => unknown;
  };
  const transfer = new DataTransfer();
  transfer.items.add(new File([file.text], file.name, { type: file.type }));
  return transfer;
}

/** A chunk's text with its white space as a citation's snippet has it: runs of it made one space. */
function normalised(text: string | null): string {
  return (text ?? '').replace(/\s+/g, ' ').trim();
}
