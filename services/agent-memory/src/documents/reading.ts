/**
 * A document's original read into chunks: what a document's work does between fetching its
 * bytes and storing their chunks. Pure (no database, no network) and CPU-bound, so it runs on a
 * worker thread (DocumentReader); the thread calls `readOriginal`.
 */
import { textChunks } from './document-chunks.js';
import { chunkDocument, inspectDocument, parseDocument, type DocumentChunk, type DocumentFormat } from './parsing.js';

export interface Original {
  bytes: Uint8Array;
  /** 'text': a text stored as such, cut as text; 'file': an upload or a fetched page, read by its format. */
  kind: 'text' | 'file';
  /** What the upload declared, or what the page was served as. */
  contentType: string;
  /** The upload's file name, or the page's path. */
  filename: string;
  /** A page's address, against which readability resolves its links. */
  url?: string;
}

export interface ReadDocument {
  format: DocumentFormat | 'plain_text';
  /** The format's MIME type (null for a text), which a page's document records. */
  contentType: string | null;
  /** From the document itself (PDF metadata, first heading, <title>…), or null. */
  title: string | null;
  pages: number | null;
  chunks: DocumentChunk[];
}

export async function readOriginal(original: Original): Promise<ReadDocument> {
  if (original.kind === 'text') {
    const chunks = textChunks(new TextDecoder().decode(original.bytes));
    return { format: 'plain_text', contentType: null, title: null, pages: null, chunks };
  }
  const { format, contentType } = await inspectDocument({ bytes: original.bytes, contentType: original.contentType, filename: original.filename });
  const parsed = await parseDocument({ bytes: original.bytes, format, ...(original.url === undefined ? {} : { url: original.url }) });
  return { format, contentType, title: parsed.title, pages: parsed.pages, chunks: chunkDocument(parsed) };
}
