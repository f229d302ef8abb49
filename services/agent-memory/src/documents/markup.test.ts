import { describe, expect, it } from 'vitest';
import { brokenDocx, DOCUMENT_TITLE, htmlPageWithChrome, pageSentence, RETURNS_TABLE, sampleDocx, sampleMarkdown } from '../../test/fixtures/documents.js';
import { markdownBlocks, markdownSegments } from './markdown.js';
import { parseDocument, type DocumentBlock } from './parsing.js';

const text = (value: string): Uint8Array => new TextEncoder().encode(value);
const outline = (blocks: DocumentBlock[]) => blocks.map(({ kind, text: content, level }) => (level === undefined ? `${kind}: ${content}` : `${kind} ${level}: ${content}`));
const HEADER = RETURNS_TABLE[0]?.join(' | ') ?? '';
/** The table as rows: the header row first, then each row with the header it stands under. */
const TABLE_ROWS = RETURNS_TABLE.map((row, index) => ({ kind: 'table_row', text: row.join(' | '), page: null, ...(index === 0 ? {} : { tableHeader: HEADER }) }));

describe('parseDocument: HTML', () => {
  it('keeps the article: headings, paragraphs, table rows, list items, code', async () => {
    const parsed = await parseDocument({ bytes: text(htmlPageWithChrome()), format: 'html', url: 'https://shop.example/help/returns' });

    expect(parsed).toMatchObject({ format: 'html', title: `${DOCUMENT_TITLE} | Example Shop`, pages: null });
    expect(outline(parsed.blocks.filter((block) => block.kind !== 'paragraph'))).toEqual([
      `heading 1: ${DOCUMENT_TITLE}`,
      // Readability takes the page's h1 out as the title: it is put back, over the article's h2s.
      'heading 2: Refund window',
      ...RETURNS_TABLE.map((row) => `table_row: ${row.join(' | ')}`),
      'heading 2: Shipping',
      'list_item: Express delivery arrives the next working day.',
      'list_item: Parcels to islands take two more days.',
      'code: tracking: PT774120\ncarrier: CTT',
    ]);
    expect(parsed.blocks.filter((block) => block.kind === 'table_row')).toEqual(TABLE_ROWS);
    expect(parsed.blocks.filter((block) => block.kind === 'paragraph').map((block) => block.text.slice(0, 40))).toEqual([
      pageSentence(1, 1).slice(0, 40),
      pageSentence(1, 2).slice(0, 40),
      pageSentence(1, 3).slice(0, 40),
      'Refunds are accepted within 30 days of d',
      'Standard shipping inside the European Un',
    ]);
  });

  it('drops navigation, header, sidebar, footer and scripts', async () => {
    const { blocks } = await parseDocument({ bytes: text(htmlPageWithChrome()), format: 'html' });
    const all = blocks.map((block) => block.text).join('\n');

    for (const chrome of ['Contact us', 'Free shipping over 60 euros', 'Related links', 'Store finder', 'Copyright', 'analytics', 'font-family']) {
      expect(all).not.toContain(chrome);
    }
  });

  it('drops the chrome of a page too short for readability to tell its article apart', async () => {
    const page = '<html><head><title>Hours</title></head><body><header>Example Shop</header><nav><a href="/">Home</a></nav><p>Open from 10:00 to 20:00.</p><footer>Copyright</footer></body></html>';
    const { title, blocks } = await parseDocument({ bytes: text(page), format: 'html' });

    expect(title).toBe('Hours');
    expect(outline(blocks)).toEqual(['heading 1: Hours', 'paragraph: Open from 10:00 to 20:00.']);
  });

  it('reads a page in the encoding its <meta> tag names', async () => {
    const page = Buffer.from('<html><head><meta charset="windows-1252"><title>Caf\xe9</title></head><body><p>Cr\xe8me br\xfbl\xe9e, 5 \x80.</p></body></html>', 'latin1');
    const { blocks } = await parseDocument({ bytes: page, format: 'html' });

    expect(blocks.at(-1)?.text).toBe('Crème brûlée, 5 €.');
  });
});

describe('parseDocument: DOCX', () => {
  it('keeps heading levels, paragraphs and table rows, with the core title', async () => {
    const parsed = await parseDocument({ bytes: await sampleDocx(), format: 'docx' });

    expect(parsed).toMatchObject({ format: 'docx', title: DOCUMENT_TITLE, pages: null });
    expect(outline(parsed.blocks)).toEqual([
      'heading 1: Returns',
      'paragraph: Most items can be returned for a refund.',
      'heading 2: Refund window',
      'paragraph: Refunds are accepted within 30 days of delivery when the item is unused.',
      ...RETURNS_TABLE.map((row) => `table_row: ${row.join(' | ')}`),
      'heading 1: Shipping',
      'paragraph: Standard shipping inside the European Union takes three to five business days.',
    ]);
    expect(parsed.blocks.filter((block) => block.kind === 'table_row')).toEqual(TABLE_ROWS);
  });

  it('refuses a broken archive', async () => {
    await expect(parseDocument({ bytes: await brokenDocx(), format: 'docx' })).rejects.toMatchObject({ code: 'unsupported_document' });
  });
});

describe('parseDocument: Markdown', () => {
  it('keeps ATX and setext headings, lists, table rows and fenced code; drops inline markup', async () => {
    const parsed = await parseDocument({ bytes: text(sampleMarkdown()), format: 'markdown' });

    expect(parsed).toMatchObject({ format: 'markdown', title: DOCUMENT_TITLE, pages: null });
    expect(outline(parsed.blocks)).toEqual([
      `heading 1: ${DOCUMENT_TITLE}`,
      'paragraph: Most items can be returned for a refund within the return window.',
      'heading 2: Refund window',
      'paragraph: Refunds are accepted within 30 days of delivery.',
      ...RETURNS_TABLE.map((row) => `table_row: ${row.join(' | ')}`),
      'heading 2: Shipping',
      'list_item: Express delivery arrives the next working day.',
      'list_item: Parcels to islands take two more days.',
      'code: tracking: PT774120\ncarrier: CTT',
    ]);
    expect(parsed.blocks.filter((block) => block.kind === 'table_row')).toEqual(TABLE_ROWS);
  });

  it('makes a nested list item of its own and a loose item of its paragraphs', async () => {
    const { blocks } = await parseDocument({ bytes: text('- Parcels\n  - Small parcels\n\n- Letters\n\n  Sent the same day.\n'), format: 'markdown' });

    expect(outline(blocks)).toEqual(['list_item: Parcels', 'list_item: Small parcels', 'list_item: Letters', 'list_item: Sent the same day.']);
  });

  it('reads a long file a segment at a time, each cut before a heading, as it reads it whole', () => {
    // Everything a cut before a heading line could break: code and raw HTML holding heading-like
    // lines, a list and a quote a heading ends, a reference defined after its use, a setext heading.
    const document = [
      `# Guide\n\nSee [the returns page][returns] first.\n`,
      '```\n# not a heading: code\n\n# nor this\n```\n',
      '~~~~md\n## still code\n~~~\n# still code, the fence needs four\n~~~~\n',
      '<!--\n# a comment\n\n-->\n',
      '<pre>\nkeep\n\n# as written\n</pre>\n',
      '## Lists\n\n- first\n- second\n',
      '## Quotes\n\n> quoted\nlazily continued\n',
      'Setext heading\n--------------\n\nUnder it.\n',
      '### Table\n\n| Item | Days |\n| --- | --- |\n| Shoes | 30 |\n',
      '[returns]: https://shop.example/returns\n',
      sampleMarkdown(),
    ].join('\n');
    expect(markdownSegments(document, 1).length).toBeGreaterThanOrEqual(6);
    expect(markdownSegments(document, 1).join('')).toBe(document);

    const whole = markdownBlocks(document, Number.POSITIVE_INFINITY);
    expect(markdownBlocks(document, 1)).toEqual(whole);
    expect(outline(whole).slice(0, 2)).toEqual(['heading 1: Guide', 'paragraph: See the returns page first.']);
    expect(whole.filter((block) => block.kind === 'code').map((block) => block.text)).toEqual([
      '# not a heading: code\n\n# nor this',
      '## still code\n~~~\n# still code, the fence needs four',
      'keep\n\n# as written',
      'tracking: PT774120\ncarrier: CTT',
    ]);
  });
});
