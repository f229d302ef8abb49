import { describe, expect, it } from 'vitest';
import { citationBody } from './citations.js';

describe('citationBody', () => {
  it('writes the message in the REST JSON shape, a missing title or page as null', () => {
    const citation = { index: 2, documentId: 'doc_1', chunkId: 'mem_1', heading: ['Returns', 'Refunds'], snippet: 'Money goes back…' };
    expect(citationBody({ ...citation, title: 'Handbook', page: 3 })).toEqual({ index: 2, document_id: 'doc_1', chunk_id: 'mem_1', title: 'Handbook', page: 3, heading: ['Returns', 'Refunds'], snippet: 'Money goes back…' });
    expect(citationBody(citation)).toMatchObject({ title: null, page: null });
  });
});
