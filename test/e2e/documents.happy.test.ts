import type { AgentPlatformClient, MemoryDocument } from '@agent-platform/client';
import { request as httpRequest } from 'node:http';
import { startReceiver, type Receiver } from '@agent-platform/kit/testing';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { DOCUMENT_TITLE, encryptedPdf, htmlPageWithChrome, multiPagePdf, pngBytes, RETURNS_TABLE, sampleCsv, sampleDocx } from '../../services/agent-memory/test/fixtures/documents.js';
import { Api, ISO_MS, id, newAccount, type Account, type ApiResponse } from './harness/client.js';
import { expectError, expectStatus } from './harness/results.js';

/** decisions §17 through REST: files and pages parsed in the background, chunks, originals, citations. */

let pages: Receiver;
let pageText = 'Refunds are accepted within 30 days of delivery.';
beforeAll(async () => {
  pages = await startReceiver((request) =>
    request.path === '/help/returns'
      ? { headers: { 'content-type': 'text/html' }, body: `<html><head><title>Returns help</title></head><body><nav>Home · Shop · Help</nav><main><h1>Returns</h1><p>${pageText}</p></main><footer>© Example Shop</footer></body></html>` }
      : { status: 404, body: 'no such page' },
  );
});
afterAll(() => pages.close());

async function setUp(): Promise<{ account: Account; client: AgentPlatformClient; agentId: string }> {
  const api = new Api();
  const account = await newAccount(api);
  const agentId = expectStatus(await account.client.POST('/api/v1/agents', { body: { name: 'Librarian', type: 'assistant', config: { memory_extraction: false } } }), 201).id;
  return { account, client: account.client, agentId };
}

/** An upload as a browser's form sends it: the fields, then the file. */
async function upload(account: Account, fields: Record<string, string>, file: { bytes: Buffer | string; name: string; type: string }): Promise<ApiResponse<MemoryDocument>> {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  form.append('file', new Blob([file.bytes], { type: file.type }), file.name);
  const response = await new Api().fetch(new URL('/api/v1/memory/documents', inject('baseUrl')), { method: 'POST', headers: { authorization: `Bearer ${account.accessToken}` }, body: form });
  return { status: response.status, headers: response.headers, body: (await response.json()) as MemoryDocument };
}

/** The original of a document, as a browser downloads it. */
async function download(account: Account, documentId: string): Promise<Response> {
  return new Api().fetch(new URL(`/api/v1/memory/documents/${documentId}/file`, inject('baseUrl')), { headers: { authorization: `Bearer ${account.accessToken}` } });
}

async function settled(client: AgentPlatformClient, documentId: string): Promise<MemoryDocument> {
  return vi.waitFor(
    async () => {
      const document = expectStatus(await client.GET('/api/v1/memory/documents/{document_id}', { params: { path: { document_id: documentId } } }));
      expect(document.status).not.toBe('processing');
      return document;
    },
    { timeout: 30_000, interval: 100 },
  );
}

describe('documents', () => {
  it('a PDF upload answers 202 processing, becomes ready with pages and structured chunks, downloads as sent, and chat cites it', async () => {
    const { account, client, agentId } = await setUp();
    const pdf = await multiPagePdf({ pages: 3 });
    const response = await upload(account, { agent_id: agentId, metadata: '{"team":"support"}' }, { bytes: pdf, name: 'handbook.pdf', type: 'application/pdf' });
    expect(response.status).toBe(202);
    const accepted = response.body;
    expect(accepted).toEqual({
      id: expect.stringMatching(id('doc')),
      agent_id: agentId,
      title: null,
      source: 'upload',
      status: 'processing',
      error: null,
      content_type: 'application/pdf',
      filename: 'handbook.pdf',
      url: null,
      refresh_seconds: null,
      bytes: pdf.length,
      chunks: 0,
      pages: null,
      metadata: { team: 'support' },
      user_id: null,
      created_at: expect.stringMatching(ISO_MS),
      refreshed_at: null,
    });

    const ready = await settled(client, accepted.id);
    expect(ready).toMatchObject({ status: 'ready', title: DOCUMENT_TITLE, pages: 3, error: null, refreshed_at: expect.stringMatching(ISO_MS) });
    expect(ready.chunks).toBeGreaterThan(1);

    const chunks = expectStatus(await client.GET('/api/v1/memory/documents/{document_id}/chunks', { params: { path: { document_id: accepted.id }, query: { per_page: 100 } } }));
    expect(chunks.total).toBe(ready.chunks);
    expect(chunks.items.map((chunk) => chunk.position)).toEqual([...chunks.items.keys()]);
    expect(chunks.items.find((chunk) => chunk.text.includes('Fact 2-1'))).toMatchObject({ page: 2, heading: [DOCUMENT_TITLE, 'Section 2'] });
    const laptop = RETURNS_TABLE[1]!;
    expect(chunks.items.some((chunk) => laptop.every((cell) => chunk.text.includes(cell)))).toBe(true);

    const listed = expectStatus(await client.GET('/api/v1/memory/documents', { params: { query: { agent_id: agentId } } }));
    expect(listed).toMatchObject({ total: 1, page: 1, per_page: 20, items: [{ id: accepted.id, status: 'ready' }] });

    const file = await download(account, accepted.id);
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toBe('application/pdf');
    expect(file.headers.get('content-disposition')).toContain('filename="handbook.pdf"');
    expect(Buffer.from(await file.arrayBuffer()).equals(pdf)).toBe(true);

    const searched = expectStatus(await client.POST('/api/v1/memory/search', { body: { agent_id: agentId, query: 'restocking fee laptop', filter: { document_id: accepted.id } } }));
    expect(searched.results[0]?.content).toContain('Laptop');

    const reply = expectStatus(await client.POST('/api/v1/agents/{agent_id}/chat', { params: { path: { agent_id: agentId } }, body: { message: 'What is the restocking fee for a laptop?' } }));
    expect(reply.citations.length).toBeGreaterThan(0);
    const [first] = reply.citations;
    expect(first).toMatchObject({ document_id: accepted.id, title: DOCUMENT_TITLE, chunk_id: expect.stringMatching(id('mem')) });
    expect(reply.content).toContain(`[${first!.index}]`);
    expect(reply.memories[first!.index - 1]?.id).toBe(first!.chunk_id);
    // The run's retrieval step records its citations in agent-memory, the reply's are mapped by the gateway: one shape.
    const run = expectStatus(await client.GET('/api/v1/runs/{run_id}', { params: { path: { run_id: reply.run_id } } }));
    expect(run.steps.find((step) => step.type === 'retrieval')).toMatchObject({ citations: reply.citations });
  });

  it('DOCX and CSV uploads and an HTML page become ready; a page is fetched again on refresh and its change is in the history', async () => {
    const { account, client, agentId } = await setUp();
    for (const file of [
      { bytes: await sampleDocx(), name: 'handbook.docx', type: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document' },
      { bytes: sampleCsv(), name: 'prices.csv', type: 'text/csv' },
      { bytes: htmlPageWithChrome(), name: 'returns.html', type: 'text/html' },
    ]) {
      const response = await upload(account, { agent_id: agentId }, file);
      expect(response.status, file.name).toBe(202);
      expect((await settled(client, response.body.id)).status, file.name).toBe('ready');
    }

    pageText = 'Refunds are accepted within 30 days of delivery.';
    const page = expectStatus(await client.POST('/api/v1/memory/documents', { body: { agent_id: agentId, url: pages.url('/help/returns'), refresh_seconds: 3_600 } }), 202);
    expect(page).toMatchObject({ source: 'url', status: 'processing', url: pages.url('/help/returns'), refresh_seconds: 3_600 });
    expect(await settled(client, page.id)).toMatchObject({ status: 'ready', title: 'Returns help' });
    const [chunk] = expectStatus(await client.GET('/api/v1/memory/documents/{document_id}/chunks', { params: { path: { document_id: page.id } } })).items;
    expect(chunk!.text).not.toContain('Example Shop');

    pageText = 'Refunds are accepted within 60 days of delivery.';
    expect(expectStatus(await client.POST('/api/v1/memory/documents/{document_id}/refresh', { params: { path: { document_id: page.id } } }), 202).status).toBe('processing');
    await settled(client, page.id);
    const history = expectStatus(await client.GET('/api/v1/memory/{memory_id}/history', { params: { path: { memory_id: chunk!.id } } })).history;
    expect(history.map((entry) => [entry.event, entry.source])).toEqual([
      ['ADD', 'document'],
      ['UPDATE', 'document'],
    ]);
    expect(history[1]!.new_content).toContain('60 days');
  });

  it('an upload that arrives in small, uneven pieces is stored byte for byte', async () => {
    const { account, agentId } = await setUp();
    // Incompressible padding: enough bytes that the stream to agent-memory pushes back while they arrive.
    const pdf = await multiPagePdf({ pages: 2, paddingBytes: 2 * 1_048_576 });
    const boundary = 'pieces-boundary-4f2a';
    const head = `--${boundary}\r\nContent-Disposition: form-data; name="agent_id"\r\n\r\n${agentId}\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="pieces.pdf"\r\nContent-Type: application/pdf\r\n\r\n`;
    const body = Buffer.concat([Buffer.from(head), pdf, Buffer.from(`\r\n--${boundary}--\r\n`)]);
    const url = new URL('/api/v1/memory/documents', new Api().baseUrl);
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const request = httpRequest(url, { method: 'POST', headers: { authorization: `Bearer ${account.accessToken}`, 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': String(body.length) } }, (response) => {
        const parts: Buffer[] = [];
        response.on('data', (part: Buffer) => parts.push(part));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(parts).toString() }));
      });
      request.on('error', reject);
      // Pieces of 1 to 97 bytes with a larger one now and then, a pause every 64: boundaries split every which way.
      void (async () => {
        for (let offset = 0, size = 1, piece = 0; offset < body.length; offset += size, size = ((size * 31) % 97) + 1 + (piece % 50 === 0 ? 4_000 : 0), piece += 1) {
          if (!request.write(body.subarray(offset, offset + size))) await new Promise((resolve) => request.once('drain', resolve));
          if (piece % 64 === 0) await new Promise((resolve) => setImmediate(resolve));
        }
        request.end();
      })();
    });
    expect(answer.status, answer.body).toBe(202);
    const document = JSON.parse(answer.body) as MemoryDocument;
    const file = await download(account, document.id);
    expect(Buffer.from(await file.arrayBuffer()).equals(pdf)).toBe(true);
  });

  it('refuses a file over the limit (413), an encrypted PDF and a renamed binary (422 unsupported_document); another tenant gets 404 for the file', async () => {
    const { account, client, agentId } = await setUp();
    const encrypted = await upload(account, { agent_id: agentId }, { bytes: await encryptedPdf(), name: 'secret.pdf', type: 'application/pdf' });
    expectError(encrypted, 422, 'unsupported_document');
    const renamed = await upload(account, { agent_id: agentId }, { bytes: pngBytes(), name: 'scan.pdf', type: 'application/pdf' });
    expectError(renamed, 422, 'unsupported_document');
    const tooLarge = await upload(account, { agent_id: agentId }, { bytes: Buffer.alloc(20 * 1_048_576 + 1, 'a'), name: 'huge.txt', type: 'text/plain' });
    expectError(tooLarge, 413, 'payload_too_large');
    expect(expectStatus(await client.GET('/api/v1/memory/documents', { params: { query: { agent_id: agentId } } })).total).toBe(0);

    const kept = await upload(account, { agent_id: agentId }, { bytes: sampleCsv(), name: 'prices.csv', type: 'text/csv' });
    const stranger = await newAccount(new Api());
    const file = await download(stranger, kept.body.id);
    expectError({ status: file.status, headers: file.headers, body: await file.json() }, 404, 'not_found');
  });
});
