import { describe, expect, it } from 'vitest';
import { DOCUMENT_TITLE, encryptedPdf, multiPagePdf, ownerOnlyEncryptedPdf, pageSentence, RETURNS_TABLE } from '../../test/fixtures/documents.js';
import { chunkDocument, parseDocument, type DocumentBlock } from './parsing.js';

const headings = (blocks: DocumentBlock[]) => blocks.filter((block) => block.kind === 'heading').map(({ text, level, page }) => ({ text, level, page }));

describe('parseDocument: PDF', () => {
  it('finds headings by font size, levelled by size, on their pages', async () => {
    const parsed = await parseDocument({ bytes: await multiPagePdf({ pages: 3 }), format: 'pdf' });

    expect(parsed).toMatchObject({ format: 'pdf', title: DOCUMENT_TITLE, pages: 3 });
    expect(headings(parsed.blocks)).toEqual([
      { text: DOCUMENT_TITLE, level: 1, page: 1 },
      { text: 'Section 1', level: 2, page: 1 },
      { text: 'Section 2', level: 2, page: 2 },
      { text: 'Section 3', level: 2, page: 3 },
    ]);
  });

  it('joins the lines of a paragraph and keeps each on its page', async () => {
    const { blocks } = await parseDocument({ bytes: await multiPagePdf({ pages: 3 }), format: 'pdf' });
    const paragraphs = blocks.filter((block) => block.kind === 'paragraph');

    // Each page has two paragraphs (before and after its table or gap), wrapped over several lines.
    expect(paragraphs.map(({ text, page }) => ({ text, page }))).toEqual(
      [1, 2, 3].flatMap((page) => [
        { text: `${pageSentence(page, 1)} ${pageSentence(page, 2)}`, page },
        { text: `${pageSentence(page, 3)} ${pageSentence(page, 4)} ${pageSentence(page, 5)}`, page },
      ]),
    );
  });

  it('reads lines of aligned cells as table rows, cells joined with " | "', async () => {
    const { blocks } = await parseDocument({ bytes: await multiPagePdf({ pages: 3 }), format: 'pdf' });
    const rows = blocks.filter((block) => block.kind === 'table_row');

    expect(rows.map(({ text, page }) => ({ text, page }))).toEqual(RETURNS_TABLE.map((row) => ({ text: row.join(' | '), page: 2 })));
  });

  it('refuses a password-protected PDF and one encrypted with an empty user password', async () => {
    for (const bytes of [await encryptedPdf(), await ownerOnlyEncryptedPdf()]) {
      await expect(parseDocument({ bytes, format: 'pdf' })).rejects.toMatchObject({ code: 'unsupported_document', message: expect.stringMatching(/encrypted/) });
    }
  });

  it('refuses bytes that are not a PDF', async () => {
    const bytes = new TextEncoder().encode('%PDF-1.7\nnot really a PDF\n');
    await expect(parseDocument({ bytes, format: 'pdf' })).rejects.toMatchObject({ code: 'unsupported_document' });
  });

  it('parses and chunks a 100-page PDF, every page in some chunk', async () => {
    const parsed = await parseDocument({ bytes: await multiPagePdf({ pages: 100 }), format: 'pdf' });
    const chunks = chunkDocument(parsed);

    expect(parsed.pages).toBe(100);
    expect(headings(parsed.blocks)).toHaveLength(101);
    expect(new Set(chunks.map((chunk) => chunk.page))).toEqual(new Set(Array.from({ length: 100 }, (_, index) => index + 1)));
    for (const page of [1, 50, 100]) {
      const chunk = chunks.find((candidate) => candidate.text.includes(`Fact ${page}-5:`));
      expect(chunk).toMatchObject({ page, heading: [DOCUMENT_TITLE, `Section ${page}`] });
    }
  });
});
