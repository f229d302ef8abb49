import { describe, expect, it } from 'vitest';
import { sampleCsv } from '../../test/fixtures/documents.js';
import { parseDocument, type DocumentBlock, type DocumentFormat } from './parsing.js';

const text = (value: string): Uint8Array => new TextEncoder().encode(value);
const parse = (format: DocumentFormat, content: string) => parseDocument({ bytes: text(content), format });
const row = (content: string): DocumentBlock => ({ kind: 'table_row', text: content, page: null });
const paragraph = (content: string): DocumentBlock => ({ kind: 'paragraph', text: content, page: null });

describe('parseDocument: CSV', () => {
  it('writes every record as one row of `header: value` pairs, past a BOM, quoted line breaks and ragged rows', async () => {
    const parsed = await parse('csv', sampleCsv());

    expect(parsed).toEqual({
      format: 'csv',
      title: null,
      pages: null,
      blocks: [
        row('sku: A-1; name: Laptop; price: 999; notes: Ships in a box, signed on delivery'),
        // An empty value is left out; so is a missing one.
        row('sku: B-2; name: Headphones; price: 79'),
        row('sku: C-3; name: Gift card; price: 25'),
      ],
    });
  });

  it('finds the delimiter in the header line and names values past the last column', async () => {
    const { blocks } = await parse('csv', 'city;opens\nLisbon;10:00;closed on Sundays\n\nPorto;"9:30"\n');

    expect(blocks).toEqual([row('city: Lisbon; opens: 10:00; column 3: closed on Sundays'), row('city: Porto; opens: 9:30')]);
  });

  it('refuses a quote that is never closed', async () => {
    await expect(parse('csv', 'a,b\n"open,2\n')).rejects.toMatchObject({ code: 'unsupported_document' });
  });
});

describe('parseDocument: JSON', () => {
  it('makes each object of an array a row of `key: value` pairs', async () => {
    const { blocks } = await parse('json', JSON.stringify([{ sku: 'A-1', price: 999, tags: ['new', 'sale'], note: null }, { sku: 'B-2', stock: { lisbon: 3 } }]));

    expect(blocks).toEqual([row('sku: A-1; price: 999; tags: ["new","sale"]'), row('sku: B-2; stock: {"lisbon":3}')]);
  });

  it('flattens anything else to `path: value` lines, a paragraph per top-level entry', async () => {
    const { blocks } = await parse('json', JSON.stringify({ store: { name: 'Lisbon', hours: { monday: '10-20' } }, phones: ['+351 1', '+351 2'], open: true }));

    expect(blocks).toEqual([paragraph('store.name: Lisbon; store.hours.monday: 10-20'), paragraph('phones[0]: +351 1; phones[1]: +351 2'), paragraph('open: true')]);
  });

  it('flattens nesting deeper than the call stack', async () => {
    const depth = 20_000;
    const { blocks } = await parse('json', `{"a":${'['.repeat(depth)}"deep"${']'.repeat(depth)}}`);

    expect(blocks).toHaveLength(1);
    expect(blocks[0]?.text).toMatch(/^a(\[0\]){20000}: deep$/);
  });

  it('refuses invalid JSON', async () => {
    await expect(parse('json', '{"a": 1,}')).rejects.toMatchObject({ code: 'unsupported_document', message: expect.stringMatching(/not valid JSON/) });
  });
});

describe('parseDocument: plain text', () => {
  it('splits paragraphs on blank lines and joins the lines within one', async () => {
    const parsed = await parse('text', 'Returns are free.\r\nRefunds take five days.\r\n\r\n\r\n   \nShipping is\tfree over 60 euros.\n');

    expect(parsed).toEqual({
      format: 'text',
      title: null,
      pages: null,
      blocks: [paragraph('Returns are free. Refunds take five days.'), paragraph('Shipping is free over 60 euros.')],
    });
  });

  it('refuses bytes that are not UTF-8', async () => {
    await expect(parseDocument({ bytes: Buffer.from([0x66, 0x6f, 0xff, 0xfe, 0x6f]), format: 'text' })).rejects.toMatchObject({ code: 'unsupported_document' });
  });
});
