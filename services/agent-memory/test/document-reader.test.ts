/**
 * DocumentReader reads originals on worker threads of bounded heap (decisions §17.2): the
 * service's own thread goes on answering meanwhile, and a document that needs more memory than a
 * thread may have fails as too large without taking the process with it.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { DocumentReader } from '../src/documents/document-reader.js';
import { multiPagePdf, randomBinary } from './fixtures/documents.js';

const MIB = 1_048_576;
const errors: unknown[] = [];
const reader = new DocumentReader({ threads: 2, memoryMb: 96, logger: { error: (fields: object) => errors.push(fields) } });
const reading = new AbortController().signal;

afterAll(async () => {
  await reader.close();
});

describe('DocumentReader', () => {
  it('reads a file by its bytes and a text as text', async () => {
    const pdf = await reader.read({ bytes: await multiPagePdf({ pages: 3 }), kind: 'file', contentType: 'application/pdf', filename: 'handbook.pdf' }, reading);
    expect(pdf).toMatchObject({ format: 'pdf', contentType: 'application/pdf', pages: 3 });
    expect(pdf.chunks.map((chunk) => chunk.page)).toContain(3);

    const text = await reader.read({ bytes: Buffer.from('# Not a heading\n\nRefunds take 30 days.'), kind: 'text', contentType: 'text/plain', filename: '' }, reading);
    expect(text).toMatchObject({ format: 'plain_text', contentType: null, title: null });
    expect(text.chunks.map((chunk) => chunk.text)).toEqual(['# Not a heading\n\nRefunds take 30 days.']);
  });

  it('keeps its threads for the next small documents rather than starting one for each', async () => {
    const page = (index: number) => ({ bytes: Buffer.from(`# Page ${index}\n\nRefunds take ${index} days.`), kind: 'file' as const, contentType: 'text/markdown', filename: `${index}.md` });
    await Promise.all([reader.read(page(0), reading), reader.read(page(1), reading)]);
    const started = reader.threadsStarted;
    for (let pair = 1; pair <= 5; pair += 1) await Promise.all([reader.read(page(2 * pair), reading), reader.read(page(2 * pair + 1), reading)]);
    expect(reader.threadsStarted).toBe(started);
  });

  it('answers a document it cannot read as unsupported_document, with why', async () => {
    const read = reader.read({ bytes: randomBinary(4_096), kind: 'file', contentType: 'text/plain', filename: 'notes.txt' }, reading);
    await expect(read).rejects.toMatchObject({ code: 'unsupported_document', message: expect.stringMatching(/not valid UTF-8|binary/) });
  });

  it('leaves the service thread free while it reads a 20 MiB text', async () => {
    const bytes = Buffer.alloc(20 * MIB - 64 * 1024, 'Refunds are accepted within 30 days of delivery.\n');
    // Timers fire on this thread only while nothing holds it; reading here would hold it throughout.
    let ticks = 0;
    const ticker = setInterval(() => (ticks += 1), 10);
    try {
      const read = await reader.read({ bytes, kind: 'file', contentType: 'text/plain', filename: 'large.txt' }, reading);
      expect(read.chunks).toHaveLength(26_666);
    } finally {
      clearInterval(ticker);
    }
    expect(ticks).toBeGreaterThanOrEqual(3);
  });

  it('fails a document whose reading needs more than the thread may have, and reads the next', async () => {
    const sections = Array.from({ length: 40_000 }, (_, index) => `<h2>Section ${index}</h2><p>Refunds take ${index % 30} days.</p>`).join('');
    const page = Buffer.from(`<html><head><title>Big</title></head><body><main>${sections}</main></body></html>`);
    const read = reader.read({ bytes: page, kind: 'file', contentType: 'text/html', filename: 'big.html' }, reading);
    await expect(read).rejects.toMatchObject({ code: 'unsupported_document', message: expect.stringContaining('more than 96 MiB') });

    const next = await reader.read({ bytes: Buffer.from('<p>Open from 10:00.</p>'), kind: 'file', contentType: 'text/html', filename: 'hours.html' }, reading);
    expect(next.chunks.map((chunk) => chunk.text)).toEqual(['Open from 10:00.']);
  });

  it('gives up a read whose signal aborts', async () => {
    const aborted = new AbortController();
    const read = reader.read({ bytes: await multiPagePdf({ pages: 50 }), kind: 'file', contentType: 'application/pdf', filename: 'long.pdf' }, aborted.signal);
    aborted.abort();
    await expect(read).rejects.toMatchObject({ name: 'AbortError' });
    expect(errors).toEqual([]);
  });
});
