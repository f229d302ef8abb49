import type { OutgoingCall } from '@agent-platform/kit/grpc';
import { startReceiver, type Answer, type Receiver } from '@agent-platform/kit/testing';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { brokenDocx, DOCUMENT_TITLE, encryptedPdf, imageOnlyPdf, htmlPageWithChrome, multiPagePdf, pngBytes, RETURNS_TABLE, sampleCsv, sampleDocx, sampleMarkdown } from './fixtures/documents.js';
import { allChunks, settled, tenantCall, uploadOf } from './support/documents.js';
import { agentMemoryTest, eventsOf, expectError, newTenant, type AgentMemoryHarness } from './support/harness.js';

// Pages are served from 127.0.0.1, which the platform refuses unless told it may reach private networks.
const test = agentMemoryTest({ env: { ALLOW_PRIVATE_NETWORK_URLS: 'true', DOCUMENT_MAX_BYTES: String(2 * 1_048_576) } });

async function downloaded(service: AgentMemoryHarness, call: OutgoingCall, documentId: string): Promise<{ head: { contentType: string; bytes: number } | undefined; bytes: Buffer }> {
  let head: { contentType: string; bytes: number } | undefined;
  const parts: Buffer[] = [];
  for await (const message of service.documents.readDocumentFile({ documentId }, call)) {
    if (message.head) head = message.head;
    if (message.data) parts.push(message.data);
  }
  return { head, bytes: Buffer.concat(parts) };
}

describe('text documents', () => {
  test('are chunked at once, ready, with the text as their original', async ({ service }) => {
    const tenant = newTenant();
    const call = tenantCall(tenant);
    const agent = await service.createAgent(tenant);
    const content = Array.from({ length: 12 }, (_, index) => `Paragraph ${index}: the warranty covers batteries for twelve months or 500 cycles.`).join('\n\n');
    const { document } = await service.documents.addTextDocument({ agentId: agent.id, title: 'Warranty', content }, call);
    expect(document).toMatchObject({ source: 'text', status: 'ready', contentType: 'text/plain; charset=utf-8', bytes: Buffer.byteLength(content), title: 'Warranty' });
    const chunks = await allChunks(service, call, document!.id);
    expect(chunks.map((chunk) => chunk.position)).toEqual([...chunks.keys()]);
    expect(chunks.length).toBe(document!.chunks);
    expect((await downloaded(service, call, document!.id)).bytes.toString()).toBe(content);
  });
});

describe('uploaded files', () => {
  test('a PDF is processing, then ready: pages, heading paths, table rows whole, its title, document.ready, findable by document_id', async ({ service }) => {
    const tenant = newTenant();
    const call = tenantCall(tenant);
    const agent = await service.createAgent(tenant);
    const pdf = await multiPagePdf({ pages: 3 });
    const { document } = await service.documents.uploadDocument(uploadOf(pdf, { agentId: agent.id, filename: 'handbook.pdf', contentType: 'application/pdf', metadataJson: '{"team":"support"}' }), call);
    expect(document).toMatchObject({ source: 'upload', status: 'processing', chunks: 0, contentType: 'application/pdf', filename: 'handbook.pdf', bytes: pdf.length });

    const ready = await settled(service.documents, call, document!.id);
    expect(ready).toMatchObject({ status: 'ready', pages: 3, title: DOCUMENT_TITLE });
    expect(ready.error).toBeUndefined();
    const chunks = await allChunks(service, call, document!.id);
    expect(chunks.length).toBe(ready.chunks);
    expect(new Set(chunks.map((chunk) => chunk.page))).toEqual(new Set([1, 2, 3]));
    expect(chunks.find((chunk) => chunk.text.includes('Fact 3-1'))?.heading).toEqual([DOCUMENT_TITLE, 'Section 3']);
    for (const row of RETURNS_TABLE.slice(1)) {
      expect(chunks.some((chunk) => row.every((cell) => chunk.text.includes(cell))), `row ${row.join(' | ')} whole in one chunk`).toBe(true);
    }

    const [event] = await eventsOf(service.database, tenant.tenantId, 'document.ready');
    expect(event?.data).toMatchObject({ document_id: document!.id, agent_id: agent.id, source: 'upload', chunks: ready.chunks, pages: 3, changed: true });

    const { results } = await service.memory.searchMemory({ agentId: agent.id, query: 'restocking fee for a laptop', topK: 3, filterJson: JSON.stringify({ document_id: document!.id }) }, call);
    expect(results.length).toBeGreaterThan(0);
    for (const result of results) expect(JSON.parse(result.item!.metadataJson)).toMatchObject({ document_id: document!.id, team: 'support' });
    expect(results[0]!.item!.content).toContain('Laptop');

    const file = await downloaded(service, call, document!.id);
    expect(file.head).toMatchObject({ contentType: 'application/pdf', bytes: pdf.length });
    expect(file.bytes.equals(pdf)).toBe(true);
  });

  test('DOCX, HTML, Markdown and CSV become ready with what they say, the HTML without its navigation and footer', async ({ service }) => {
    const tenant = newTenant();
    const call = tenantCall(tenant);
    const agent = await service.createAgent(tenant);
    const files = [
      { file: await sampleDocx(), filename: 'handbook.docx', contentType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document' },
      { file: htmlPageWithChrome(), filename: 'returns.html', contentType: 'text/html' },
      { file: sampleMarkdown(), filename: 'returns.md', contentType: 'text/markdown' },
      { file: sampleCsv(), filename: 'prices.csv', contentType: 'text/csv' },
    ];
    const texts = new Map<string, string>();
    for (const { file, filename, contentType } of files) {
      const { document } = await service.documents.uploadDocument(uploadOf(file, { agentId: agent.id, filename, contentType }), call);
      const ready = await settled(service.documents, call, document!.id);
      expect(ready.status, `${filename}: ${ready.error ?? ''}`).toBe('ready');
      texts.set(filename, (await allChunks(service, call, document!.id)).map((chunk) => chunk.text).join('\n'));
    }
    expect(texts.get('handbook.docx')).toContain('Headphones');
    expect(texts.get('returns.html')).toContain('Refunds are accepted within 30 days');
    expect(texts.get('returns.html')).not.toContain('All rights reserved');
    expect(texts.get('returns.html')).not.toContain('Store finder');
    expect(texts.get('returns.md')).toContain('Express delivery');
    expect(texts.get('prices.csv')).toMatch(/Laptop/);
    const listed = await service.documents.listDocuments({ agentId: agent.id, page: { page: 1, perPage: 10 } }, call);
    expect(listed.total).toBe(4);
    expect(listed.documents.map((document) => document.filename)).toEqual(['prices.csv', 'returns.md', 'returns.html', 'handbook.docx']);
  });

  test('a file over DOCUMENT_MAX_BYTES, an encrypted PDF, a renamed binary and a broken DOCX are refused, and nothing is stored', async ({ service }) => {
    const tenant = newTenant();
    const call = tenantCall(tenant);
    const agent = await service.createAgent(tenant);
    const upload = (file: Buffer | string, filename: string, contentType: string) => service.documents.uploadDocument(uploadOf(file, { agentId: agent.id, filename, contentType }), call);
    await expectError(upload(Buffer.alloc(2 * 1_048_576 + 1, 'a'), 'big.txt', 'text/plain'), 'payload_too_large');
    await expectError(upload(await encryptedPdf(), 'secret.pdf', 'application/pdf'), 'unsupported_document');
    await expectError(upload(pngBytes(), 'photo.pdf', 'application/pdf'), 'unsupported_document');
    await expectError(upload(pngBytes(), 'notes.txt', 'text/plain'), 'unsupported_document');
    await expectError(upload(await brokenDocx(), 'broken.docx', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document'), 'unsupported_document');
    expect((await service.documents.listDocuments({ agentId: agent.id, page: undefined }, call)).total).toBe(0);
    const [stored] = await service.database.query<{ count: string }>(`select count(*) from document_files where tenant_id = $1`, [tenant.tenantId]);
    expect(stored?.count).toBe('0');
  });

  test('a PDF with no text (a scan) fails with the reason, and document.failed', async ({ service }) => {
    const tenant = newTenant();
    const call = tenantCall(tenant);
    const agent = await service.createAgent(tenant);
    const { document } = await service.documents.uploadDocument(uploadOf(await imageOnlyPdf(), { agentId: agent.id, filename: 'scan.pdf', contentType: 'application/pdf' }), call);
    const failed = await settled(service.documents, call, document!.id);
    expect(failed).toMatchObject({ status: 'failed', chunks: 0, error: expect.stringContaining('no text') });
    const [event] = await eventsOf(service.database, tenant.tenantId, 'document.failed');
    expect(event?.data).toMatchObject({ document_id: document!.id, status: 'failed' });
  });

  test("another tenant's document, chunks, original and refresh are not_found; deleting takes the original too", async ({ service }) => {
    const [tenant, stranger] = [newTenant(), newTenant()];
    const call = tenantCall(tenant);
    const agent = await service.createAgent(tenant);
    const { document } = await service.documents.uploadDocument(uploadOf(sampleMarkdown(), { agentId: agent.id, filename: 'secret.md', contentType: 'text/markdown' }), call);
    await settled(service.documents, call, document!.id);
    const foreign = tenantCall(stranger);
    const documentId = document!.id;
    await expectError(service.documents.getDocument({ documentId }, foreign), 'not_found');
    await expectError(service.documents.listDocumentChunks({ documentId, page: undefined }, foreign), 'not_found');
    await expectError(downloaded(service, foreign, documentId), 'not_found');
    await expectError(service.documents.refreshDocument({ documentId }, foreign), 'not_found');
    await expectError(service.documents.deleteDocument({ documentId }, foreign), 'not_found');
    await expectError(service.documents.listDocuments({ agentId: agent.id, page: undefined }, foreign), 'not_found');

    await service.documents.deleteDocument({ documentId }, call);
    await expectError(service.documents.getDocument({ documentId }, call), 'not_found');
    const [stored] = await service.database.query<{ count: string }>(`select count(*) from document_files where document_id = $1`, [documentId]);
    expect(stored?.count).toBe('0');
  });
  test('no worker claims an upload before its original is stored: the document and its file are written in one transaction', async ({ service }) => {
    // The original's row made slow to write, longer than the workers' poll (every 2 s): as a
    // 20 MiB original is. Written apart, a worker claimed the document meanwhile, read an empty
    // file and failed it as having no text.
    await service.database.query(`create function slow_original() returns trigger language plpgsql as $$ begin perform pg_sleep(2.5); return new; end $$`);
    await service.database.query(`create trigger slow_original before insert on document_files for each row execute function slow_original()`);
    try {
      const tenant = newTenant();
      const call = tenantCall(tenant);
      const agent = await service.createAgent(tenant);
      const { document } = await service.documents.uploadDocument(uploadOf('Refunds are accepted within 30 days of delivery.', { agentId: agent.id, filename: 'refunds.txt', contentType: 'text/plain' }), call);
      expect(await settled(service.documents, call, document!.id)).toMatchObject({ status: 'ready', chunks: 1 });
    } finally {
      await service.database.query(`drop trigger slow_original on document_files`);
      await service.database.query(`drop function slow_original()`);
    }
  });
});

describe('web pages', () => {
  let pages: Receiver;
  let article = 'Refunds are accepted within 30 days of delivery.';
  beforeAll(async () => {
    pages = await startReceiver((request): Answer => {
      if (request.path === '/moved') return { status: 302, headers: { location: '/help' } };
      if (request.path === '/missing') return { status: 404, body: 'gone' };
      return { headers: { 'content-type': 'text/html; charset=utf-8' }, body: `<html><head><title>Help centre</title></head><body><nav>Home | Shop | Contact</nav><article><h1>Returns</h1><p>${article}</p><p>Refunds reach the original payment method within five working days.</p></article><footer>Copyright Example Shop</footer></body></html>` };
    });
  });
  afterAll(() => pages.close());

  test('a page is fetched (redirects followed) and kept; a refresh re-chunks only what changed, with the change in the items\' history', async ({ service }) => {
    const tenant = newTenant();
    const call = tenantCall(tenant);
    const agent = await service.createAgent(tenant);
    article = 'Refunds are accepted within 30 days of delivery.';
    const { document } = await service.documents.addPageDocument({ agentId: agent.id, url: pages.url('/moved'), refreshSeconds: 3_600 }, call);
    expect(document).toMatchObject({ source: 'url', status: 'processing', refreshSeconds: 3_600 });
    const ready = await settled(service.documents, call, document!.id);
    expect(ready).toMatchObject({ status: 'ready', title: 'Help centre', contentType: 'text/html' });
    const [before] = await allChunks(service, call, document!.id);
    expect(before!.text).toContain('within 30 days');
    expect(before!.text).not.toContain('Copyright');

    // Unchanged: a refresh asked for answers ready again, and nothing is rewritten.
    await service.documents.refreshDocument({ documentId: document!.id }, call);
    const same = await settled(service.documents, call, document!.id);
    expect(same.refreshedAt!.getTime()).toBeGreaterThan(ready.refreshedAt!.getTime());
    expect((await service.memory.getMemoryHistory({ memoryId: before!.id }, call)).entries.map((entry) => entry.event)).toEqual(['ADD']);
    expect((await eventsOf(service.database, tenant.tenantId, 'document.ready')).map((event) => event.data['changed'])).toEqual([true, false]);

    article = 'Refunds are accepted within 45 days of delivery.';
    await service.documents.refreshDocument({ documentId: document!.id }, call);
    await settled(service.documents, call, document!.id);
    const [after] = await allChunks(service, call, document!.id);
    expect(after!.id).toBe(before!.id);
    expect(after!.text).toContain('within 45 days');
    const history = (await service.memory.getMemoryHistory({ memoryId: before!.id }, call)).entries;
    expect(history.map((entry) => [entry.event, entry.source])).toEqual([
      ['ADD', 'document'],
      ['UPDATE', 'document'],
    ]);
    expect(history[1]!.oldContent).toContain('within 30 days');
    expect((await downloaded(service, call, document!.id)).bytes.toString()).toContain('within 45 days');
  });

  test('a page that answers 404 fails with the reason and document.failed', async ({ service }) => {
    const tenant = newTenant();
    const call = tenantCall(tenant);
    const agent = await service.createAgent(tenant);
    const { document } = await service.documents.addPageDocument({ agentId: agent.id, url: pages.url('/missing') }, call);
    const failed = await settled(service.documents, call, document!.id);
    expect(failed.status).toBe('failed');
    expect(failed.error).toContain('HTTP 404');
    const [event] = await eventsOf(service.database, tenant.tenantId, 'document.failed');
    expect(event?.data).toMatchObject({ document_id: document!.id, status: 'failed', error: failed.error });
  });

  test('a URL that is not http(s) or a refresh interval out of range is a validation_error naming the field', async ({ service }) => {
    const tenant = newTenant();
    const agent = await service.createAgent(tenant);
    const call = tenantCall(tenant);
    const badUrl = await expectError(service.documents.addPageDocument({ agentId: agent.id, url: 'file:///etc/passwd' }, call), 'validation_error');
    expect(badUrl.details.map((detail) => detail.field)).toEqual(['url']);
    const badInterval = await expectError(service.documents.addPageDocument({ agentId: agent.id, url: pages.url('/help'), refreshSeconds: 5 }, call), 'validation_error');
    expect(badInterval.details.map((detail) => detail.field)).toEqual(['refresh_seconds']);
  });
});
