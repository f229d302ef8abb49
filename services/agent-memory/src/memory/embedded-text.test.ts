import { describe, expect, it } from 'vitest';
import { embeddedText, headingOf } from './embedded-text.js';

describe('embeddedText', () => {
  it("writes a document chunk's heading path before its content", () => {
    const chunk = { documentId: 'doc_1', content: 'Money goes back within five days.', metadata: { document_id: 'doc_1', heading: ['Returns', 'Refunds'] } };
    expect(embeddedText(chunk)).toBe('Returns › Refunds\n\nMoney goes back within five days.');
  });

  it('is the content alone for a chunk before any heading, and for an item that is no chunk whatever its metadata says', () => {
    expect(embeddedText({ documentId: 'doc_1', content: 'Intro.', metadata: { document_id: 'doc_1' } })).toBe('Intro.');
    expect(embeddedText({ documentId: null, content: 'Likes tea.', metadata: { heading: ['Drinks'] } })).toBe('Likes tea.');
  });
});

describe('headingOf', () => {
  it("reads the path's strings, and nothing from metadata that holds no path", () => {
    expect(headingOf({ heading: ['Returns', 3, 'Refunds'] })).toEqual(['Returns', 'Refunds']);
    expect(headingOf({ heading: 'Returns' })).toEqual([]);
    expect(headingOf({})).toEqual([]);
  });
});
