import { createHash } from 'node:crypto';
import type { ChangeSource } from '../memory/memory-items.js';
import { chunkText } from './chunking.js';
import type { DocumentRecord } from './documents.repository.js';
import type { DocumentChunk } from './parsing.js';

/** How a document's chunks are recorded in their items' history. */
export const DOCUMENT_CHANGE: ChangeSource = { source: 'document', sessionId: null };

/** A text is cut as it always was: by paragraphs, lines, sentences; no headings, no pages. */
export function textChunks(content: string): DocumentChunk[] {
  return chunkText(content).map((text, position) => ({ text, heading: [], page: null, position }));
}

/** What a chunk's item carries: the document's metadata, then where in the document it is. */
export function chunkMetadata(document: DocumentRecord, chunk: DocumentChunk): Record<string, unknown> {
  return {
    ...document.metadata,
    document_id: document.id,
    chunk_index: chunk.position,
    ...(document.title ? { title: document.title } : {}),
    ...(chunk.page === null ? {} : { page: chunk.page }),
    ...(chunk.heading.length === 0 ? {} : { heading: chunk.heading }),
  };
}

export function contentHash(chunks: readonly DocumentChunk[]): string {
  const hash = createHash('sha256');
  for (const chunk of chunks) hash.update(JSON.stringify([chunk.text, chunk.page, chunk.heading]));
  return hash.digest('hex');
}
