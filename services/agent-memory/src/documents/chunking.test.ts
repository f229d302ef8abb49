import { seededRandom } from '@agent-platform/kit/testing';
import { describe, expect, it } from 'vitest';
import { chunkSpans, chunkText, type ChunkSpan } from './chunking.js';

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;


function sentence(words: number, next: () => number): string {
  const vocabulary = ['invoice', 'INV-20931', 'shipped', 'the', 'a', 'customer', 'Straße', '東京', 'naïve', 'é', 'data'];
  return Array.from({ length: words }, () => vocabulary[Math.floor(next() * vocabulary.length)]).join(' ') + '.';
}

/** Checks every promise chunkSpans makes about one text. */
function expectWellFormed(text: string, spans: ChunkSpan[], maxChars: number): void {
  const chunks = spans.map((span) => text.slice(span.start, span.end));
  let covered = 0;
  spans.forEach((span, index) => {
    const chunk = chunks[index] ?? '';
    expect(chunk.length).toBeGreaterThan(0);
    expect(chunk.length).toBeLessThanOrEqual(maxChars);
    expect(chunk).toBe(chunk.trim());
    expect(LONE_SURROGATE.test(chunk)).toBe(false);
    const previous = spans[index - 1];
    if (previous) {
      expect(span.start).toBeGreaterThan(previous.start);
      expect(span.end).toBeGreaterThan(previous.end);
      // Nothing but white space may fall between two chunks.
      expect(text.slice(previous.end, Math.max(previous.end, span.start)).trim()).toBe('');
    }
    covered = Math.max(covered, span.end);
  });
  expect(text.slice(0, spans[0]?.start ?? text.length).trim()).toBe('');
  expect(text.slice(covered).trim()).toBe('');
}

describe('chunkText', () => {
  it('gives no chunks for empty or blank text', () => {
    expect(chunkText('')).toEqual([]);
    expect(chunkText(' \r\n\t \n')).toEqual([]);
  });

  it('keeps a short text as one trimmed chunk', () => {
    expect(chunkText('  Hello, world.\r\n')).toEqual(['Hello, world.']);
  });

  it('cuts between paragraphs when one falls in the window', () => {
    const paragraph = (n: number): string => `Paragraph ${n}. ${'word '.repeat(70).trim()}.`;
    const text = [1, 2, 3, 4].map(paragraph).join('\n\n');
    const chunks = chunkText(text, { maxChars: 1000, overlapChars: 200 });
    expect(chunks[0]).toBe([1, 2].map(paragraph).join('\n\n'));
    expect(chunks.length).toBe(2);
    expect(chunks[1]?.endsWith(paragraph(4))).toBe(true);
  });

  it('cuts after a sentence when there are no paragraphs, and overlaps by about overlapChars', () => {
    const next = seededRandom(7);
    const text = Array.from({ length: 60 }, () => sentence(12, next)).join(' ');
    const spans = chunkSpans(text, { maxChars: 500, overlapChars: 100 });
    expect(spans.length).toBeGreaterThan(3);
    for (const [index, span] of spans.entries()) {
      if (index < spans.length - 1) expect(text.slice(span.start, span.end)).toMatch(/\.$/);
      const following = spans[index + 1];
      if (following) {
        const overlap = span.end - following.start;
        expect(overlap).toBeGreaterThan(100 - 20);
        expect(overlap).toBeLessThanOrEqual(100);
      }
    }
    expectWellFormed(text, spans, 500);
  });

  it('cuts a text without spaces hard, at exactly maxChars, with exactly the overlap', () => {
    const text = 'x'.repeat(2500);
    const chunks = chunkText(text, { maxChars: 1000, overlapChars: 200 });
    expect(chunks.map((chunk) => chunk.length)).toEqual([1000, 1000, 900]);
    expectWellFormed(text, chunkSpans(text, { maxChars: 1000, overlapChars: 200 }), 1000);
  });

  it('never splits a CRLF line break, nor keeps one at a chunk edge', () => {
    const text = Array.from({ length: 40 }, (_, n) => `Line ${n} says something useful`).join('\r\n');
    const chunks = chunkText(text, { maxChars: 120, overlapChars: 30 });
    for (const chunk of chunks) expect(chunk).toMatch(/^Line|^\S/);
    for (const chunk of chunks) expect(chunk).not.toMatch(/[\r\n]$|^[\r\n]/);
    expectWellFormed(text, chunkSpans(text, { maxChars: 120, overlapChars: 30 }), 120);
  });

  it('splits a very long word between ordinary ones', () => {
    const text = `start ${'y'.repeat(3000)} end`;
    const spans = chunkSpans(text, { maxChars: 1000, overlapChars: 200 });
    expectWellFormed(text, spans, 1000);
    expect(text.slice(spans.at(-1)?.start ?? 0)).toMatch(/ end$/);
  });

  it('never splits a surrogate pair', () => {
    const text = '😀'.repeat(1500);
    const spans = chunkSpans(text, { maxChars: 999, overlapChars: 101 });
    expect(spans.length).toBeGreaterThan(3);
    expectWellFormed(text, spans, 999);
  });

  it('refuses options that cannot work', () => {
    expect(() => chunkText('text', { maxChars: 1 })).toThrow(RangeError);
    expect(() => chunkText('text', { maxChars: 100, overlapChars: 100 })).toThrow(RangeError);
    expect(() => chunkText('text', { overlapChars: -1 })).toThrow(RangeError);
  });

  it('defaults to 1000-character chunks overlapping by about 200', () => {
    const text = 'word '.repeat(1000);
    const spans = chunkSpans(text);
    for (const span of spans) expect(span.end - span.start).toBeLessThanOrEqual(1000);
    const [first, second] = spans;
    expect(first && second ? first.end - second.start : 0).toBeGreaterThan(190);
  });

  it('covers every character in order, whatever the text and options (property)', () => {
    const next = seededRandom(20_931);
    const pieces = ['word', ' ', '  ', '\n', '\r\n', '\n\n', '\r\n\r\n', '.', '! ', '😀', 'é', '東京', '\t', 'x'.repeat(40), ' '.repeat(60), 'INV-20931'];
    for (let round = 0; round < 400; round += 1) {
      const length = Math.floor(next() * 120);
      const text = Array.from({ length }, () => pieces[Math.floor(next() * pieces.length)]).join('');
      const maxChars = 2 + Math.floor(next() * 150);
      const overlapChars = Math.floor(next() * maxChars);
      const spans = chunkSpans(text, { maxChars, overlapChars });
      expectWellFormed(text, spans, maxChars);
      // Read back in order, each chunk is found at or after the previous one's start.
      let from = 0;
      for (const chunk of chunkText(text, { maxChars, overlapChars })) {
        const at = text.indexOf(chunk, from);
        expect(at).toBeGreaterThanOrEqual(from);
        from = at + 1;
      }
    }
  });
});
