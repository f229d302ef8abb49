import type { FoundItem } from './memory-items.js';

/** Between a heading path's levels in an embedded text. */
const HEADING_SEPARATOR = ' › ';

/** A document chunk's heading path as its metadata keeps it (`chunkMetadata`), outermost first; [] when it has none. */
export function headingOf(metadata: Record<string, unknown>): string[] {
  const heading = metadata['heading'];
  return Array.isArray(heading) ? heading.filter((part): part is string => typeof part === 'string') : [];
}

/**
 * The text an item's vector is made from and its words are ranked in: its content, after its
 * heading path when it is a document chunk (`Returns › Refunds\n\n<content>`), since a section's
 * body seldom repeats the heading a question asks in. The content stays the body alone: it is
 * what answers show and citations quote. Every vector of an item is made from this (the first, a
 * re-embedding, one made on the spot for search), so an item scores the same whichever made it;
 * the full-text column indexes the same words (migration 0020). A free item's metadata is its
 * owner's: only a document's structure is read.
 */
export function embeddedText(item: Pick<FoundItem, 'content' | 'documentId' | 'metadata'>): string {
  const heading = item.documentId === null ? [] : headingOf(item.metadata);
  return heading.length === 0 ? item.content : `${heading.join(HEADING_SEPARATOR)}\n\n${item.content}`;
}
