/**
 * Reading uploaded documents (decisions §17): which format an upload is (inspectDocument, at
 * upload time), its structure as blocks (parseDocument, in a background worker), and chunks that
 * keep that structure (chunkDocument). Pure functions: no database, no network.
 */
import { normaliseBlockText, type DocumentFormat, type ParsedDocument } from './document.js';
import { FORMATS } from './formats.js';

export { chunkDocument, type DocumentChunk } from './chunk-document.js';
export { DEFAULT_MAX_CHARS, DEFAULT_OVERLAP_CHARS, type ChunkOptions } from './chunking.js';
export { CELL_SEPARATOR, type DocumentBlock, type DocumentFormat, type ParsedDocument } from './document.js';
export { FORMATS, inspectDocument } from './formats.js';

/**
 * The document's title, page count and blocks in reading order, with white space normalised and
 * empty blocks dropped. Throws DomainError('unsupported_document') when the content turns out
 * unreadable. For 'html', `url` (when known) is the page's address, against which readability
 * resolves its links.
 */
export async function parseDocument(input: { bytes: Uint8Array; format: DocumentFormat; url?: string }): Promise<ParsedDocument> {
  const { title, pages, blocks } = await FORMATS[input.format].parse(input.url === undefined ? { bytes: input.bytes } : { bytes: input.bytes, url: input.url });
  const normalised = blocks.map((block) => ({ ...block, text: normaliseBlockText(block) })).filter((block) => block.text !== '');
  return { format: input.format, title, pages, blocks: normalised };
}
