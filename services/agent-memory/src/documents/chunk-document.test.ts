import { seededRandom } from '@agent-platform/kit/testing';
import { describe, expect, it } from 'vitest';
import { chunkDocument, type DocumentBlock, type DocumentChunk, type ParsedDocument } from './parsing.js';


const WORDS = ['refund', 'parcel', 'invoice', 'warranty', 'courier', 'Lisbon', 'customer', 'delivery', 'naïve', '東京'];

let wordCount = 0;

/** Words made unique by a number, so a test can tell where each one went. */
function words(count: number, next: () => number): string {
  return Array.from({ length: count }, () => `${WORDS[Math.floor(next() * WORDS.length)]}${(wordCount += 1)}`).join(' ');
}

const document = (blocks: DocumentBlock[]): ParsedDocument => ({ format: 'text', title: null, pages: null, blocks });
const heading = (text: string, level: number): DocumentBlock => ({ kind: 'heading', text, level, page: null });
const paragraph = (text: string, page: number | null = null): DocumentBlock => ({ kind: 'paragraph', text, page });
const row = (text: string, tableHeader?: string): DocumentBlock => ({ kind: 'table_row', text, page: null, ...(tableHeader === undefined ? {} : { tableHeader }) });

/**
 * A document of every kind of block, headings of three levels with unique names, paragraphs up to
 * three times maxChars, tables whose rows are marked `row-N` (one in a while longer than maxChars).
 */
function randomDocument(seed: number, maxChars: number): { parsed: ParsedDocument; paths: Map<DocumentBlock, string[]> } {
  const next = seededRandom(seed);
  const blocks: DocumentBlock[] = [];
  const paths = new Map<DocumentBlock, string[]>();
  let path: { level: number; text: string }[] = [];
  let rows = 0;
  for (let index = 0; index < 120; index += 1) {
    const page = Math.floor(index / 10) + 1;
    const roll = next();
    if (roll < 0.12) {
      const level = 1 + Math.floor(next() * 3);
      path = [...path.filter((entry) => entry.level < level), { level, text: `Heading ${index}` }];
      blocks.push({ ...heading(`Heading ${index}`, level), page });
      continue;
    }
    let block: DocumentBlock;
    if (roll < 0.45) {
      const header = `row-${(rows += 1)} | name | price`;
      const table = Array.from({ length: 1 + Math.floor(next() * 8) }, () => {
        const long = next() < 0.05;
        return { ...row(`row-${(rows += 1)} | ${words(long ? maxChars / 4 : 3, next)} | ${Math.floor(next() * 100)} euros`, header), page };
      });
      for (const tableRow of [{ ...row(header), page }, ...table]) {
        blocks.push(tableRow);
        paths.set(tableRow, path.map((entry) => entry.text));
      }
      continue;
    } else if (roll < 0.55) {
      block = { kind: 'list_item', text: words(1 + Math.floor(next() * 20), next), page };
    } else if (roll < 0.6) {
      block = { kind: 'code', text: `${words(3, next)}\n  ${words(4, next)}\n${words(2, next)}`, page };
    } else {
      block = paragraph(`${words(Math.floor(next() * (maxChars / 2)), next)}.`, page);
    }
    blocks.push(block);
    paths.set(block, path.map((entry) => entry.text));
  }
  return { parsed: document(blocks), paths };
}

/** How far the start of `next` repeats the end of `previous`, in characters, counting whole words only. */
function overlapLength(previous: string, next: string): number {
  for (let length = Math.min(previous.length, next.length); length > 0; length -= 1) {
    const wordEnd = length === next.length || /\s/.test(next.charAt(length));
    const wordStart = length === previous.length || /\s/.test(previous.charAt(previous.length - length - 1));
    if (wordEnd && wordStart && previous.endsWith(next.slice(0, length))) return length;
  }
  return 0;
}

/** The words `words` makes, and row names: each is in one block only. */
const UNIQUE_WORD = /^(\p{L}+|row-)\d+\.?$/u;

/** A table's header row in randomDocument. */
const HEADER_ROW = /^row-\d+ \| name \| price$/;

describe('chunkDocument', () => {
  const OPTIONS = [
    { maxChars: 1000, overlapChars: 200 },
    { maxChars: 300, overlapChars: 60 },
    { maxChars: 120, overlapChars: 0 },
  ];

  for (const options of OPTIONS) {
    for (const seed of [1, 2, 3]) {
      it(`keeps every promise on a random document (seed ${seed}, ${options.maxChars}/${options.overlapChars})`, () => {
        const { parsed, paths } = randomDocument(seed, options.maxChars);
        const chunks = chunkDocument(parsed, options);
        const rows = new Set(parsed.blocks.filter((block) => block.kind === 'table_row').map((block) => block.text));
        const rowOfWord = new Map([...rows].flatMap((text) => text.split(/\s+/).filter((word) => UNIQUE_WORD.test(word)).map((word) => [word, text] as const)));

        expect(chunks.map((chunk) => chunk.position)).toEqual(chunks.map((_, index) => index));
        for (const chunk of chunks) {
          expect(chunk.text.trim()).not.toBe('');
          // Longer than maxChars only as a lone table row.
          if (chunk.text.length > options.maxChars) expect(rows.has(chunk.text)).toBe(true);
          // Table rows are whole: a line with any word of a row is that row.
          for (const line of chunk.text.split('\n')) {
            const ofRow = line.split(/\s+/).map((word) => rowOfWord.get(word)).find((text) => text !== undefined);
            if (ofRow !== undefined) expect(line).toBe(ofRow);
          }
        }
        const tokens = chunks.map((chunk) => new Set(chunk.text.split(/\s+/)));
        for (const block of parsed.blocks.filter((candidate) => candidate.kind !== 'heading')) {
          // Every block is in some chunk: whole when it fits one, else each of its (unique) words…
          if (block.text.length <= options.maxChars) expect(chunks.some((chunk) => chunk.text.includes(block.text))).toBe(true);
          for (const word of block.text.split(/\s+/).filter((token) => UNIQUE_WORD.test(token))) {
            const holders = chunks.filter((_, index) => tokens[index]?.has(word));
            expect(holders.length).toBeGreaterThan(0);
            // …and only under its own heading path, overlap included: overlap never crosses a heading.
            for (const chunk of holders) expect(chunk.heading).toEqual(paths.get(block));
          }
        }
        chunks.slice(1).forEach((chunk, index) => {
          const previous = chunks[index] as DocumentChunk;
          // A repeated table header is not overlap.
          const lines = chunk.text.split('\n');
          const carried = HEADER_ROW.test(lines[0] ?? '') ? lines.slice(1).join('\n') : chunk.text;
          expect(overlapLength(previous.text, carried)).toBeLessThanOrEqual(options.overlapChars);
        });
      });
    }
  }

  it('starts each chunk with the end of the one before: whole blocks, else a paragraph end from a word start', () => {
    const paragraphs = Array.from({ length: 6 }, (_, index) => paragraph(`Paragraph ${index}: ${'refund parcel invoice '.repeat(13).trim()}.`));
    const chunks = chunkDocument(document(paragraphs), { maxChars: 700, overlapChars: 200 });
    const rows = Array.from({ length: 30 }, (_, index) => row(`Item ${String(index).padStart(2, '0')} | 14 days | 10 percent`));
    const rowChunks = chunkDocument(document(rows), { maxChars: 400, overlapChars: 100 });

    expect(chunks.length).toBeGreaterThan(2);
    chunks.slice(1).forEach((chunk, index) => {
      const previous = chunks[index]?.text ?? '';
      const overlap = overlapLength(previous, chunk.text);
      expect(overlap).toBeGreaterThan(100);
      expect(overlap).toBeLessThanOrEqual(200);
      // It starts at a word.
      expect(previous.at(-overlap - 1)).toMatch(/\s/);
    });
    expect(rowChunks.length).toBeGreaterThan(2);
    rowChunks.slice(1).forEach((chunk, index) => {
      const previousRows = rowChunks[index]?.text.split('\n') ?? [];
      // Rows of 30 characters: three whole rows fit in 100 (3 × 30 + 2), four do not.
      expect(chunk.text.split('\n').slice(0, 3)).toEqual(previousRows.slice(-3));
    });
  });

  it('starts a new chunk at each heading, with no overlap, under the path of levels above it', () => {
    const chunks = chunkDocument(
      document([
        paragraph('Before any heading.'),
        heading('Returns', 1),
        paragraph('Returns are free.'),
        heading('Refund window', 2),
        paragraph('Thirty days.'),
        heading('Exceptions', 3),
        paragraph('Gift cards.'),
        heading('Fees', 2),
        paragraph('None.'),
        heading('Shipping', 1),
        paragraph('Free over 60 euros.'),
      ]),
    );

    expect(chunks.map(({ text, heading: path }) => ({ text, heading: path }))).toEqual([
      { text: 'Before any heading.', heading: [] },
      { text: 'Returns are free.', heading: ['Returns'] },
      { text: 'Thirty days.', heading: ['Returns', 'Refund window'] },
      { text: 'Gift cards.', heading: ['Returns', 'Refund window', 'Exceptions'] },
      { text: 'None.', heading: ['Returns', 'Fees'] },
      { text: 'Free over 60 euros.', heading: ['Shipping'] },
    ]);
  });

  it('gives a chunk the page of its first block that is not overlap', () => {
    const text = (name: string) => `${name} ${'parcel '.repeat(40).trim()}.`;
    const chunks = chunkDocument(document([paragraph(text('A'), 1), paragraph(text('B'), 1), paragraph(text('C'), 2), paragraph(text('D'), 3)]), { maxChars: 800, overlapChars: 200 });

    expect(chunks.map((chunk) => ({ start: chunk.text.slice(0, 1), page: chunk.page }))).toEqual([
      { start: 'A', page: 1 },
      // Starts with the end of B (page 1), but C is its own first block.
      { start: 'p', page: 2 },
    ]);
    expect(chunks[1]?.text).toContain('D parcel');
  });

  it('repeats the table header at the head of a chunk that starts inside the table', () => {
    const header = 'Item | Window | Fee';
    const blocks = [row(header), ...Array.from({ length: 12 }, (_, index) => row(`Item ${index} | 14 days | ${index} percent`, header))];
    const chunks = chunkDocument(document(blocks), { maxChars: 150, overlapChars: 30 });

    expect(chunks.length).toBeGreaterThan(2);
    for (const chunk of chunks) {
      expect(chunk.text.split('\n')[0]).toBe(header);
      expect(chunk.text.length).toBeLessThanOrEqual(150);
    }
  });

  it('keeps a row longer than maxChars whole, alone in its chunk', () => {
    const long = `Laptop | ${'a very long description '.repeat(10).trim()} | 10 percent`;
    const chunks = chunkDocument(document([paragraph('Intro.'), row(long), paragraph('Outro.')]), { maxChars: 100, overlapChars: 20 });

    expect(chunks.map((chunk) => chunk.text)).toEqual(['Intro.', long, 'Outro.']);
  });

  it('cuts a paragraph longer than maxChars with chunkSpans, its first piece filling the chunk before', () => {
    const long = Array.from({ length: 40 }, (_, index) => `Sentence ${index} is here.`).join(' ');
    const chunks = chunkDocument(document([paragraph('Opening words of the section.'), paragraph(long)]), { maxChars: 200, overlapChars: 40 });

    expect(chunks[0]?.text).toMatch(/^Opening words of the section\.\nSentence 0 is here\. Sentence 1/);
    for (const chunk of chunks) expect(chunk.text.length).toBeLessThanOrEqual(200);
    chunks.slice(1).forEach((chunk, index) => {
      const overlap = overlapLength(chunks[index]?.text ?? '', chunk.text);
      expect(overlap).toBeGreaterThan(0);
      expect(overlap).toBeLessThanOrEqual(40);
    });
    expect(chunks.at(-1)?.text.endsWith('Sentence 39 is here.')).toBe(true);
  });

  it('drops empty blocks and normalises white space, keeping the lines of code', () => {
    const chunks = chunkDocument(document([paragraph('  Two\n\tlines  '), paragraph(' \n '), { kind: 'code', text: '\nif (a) {\n  b();   \n}\n\n', page: null }]));

    expect(chunks.map((chunk) => chunk.text)).toEqual(['Two lines\nif (a) {\n  b();\n}']);
  });
});
