import type { Citation } from '@agent-platform/proto/agents/v1/documents';

/**
 * A `Citation` message as REST JSON (decisions §17), in one place for both sides that write it:
 * the gateway, in chat answers and session messages, and agent-memory, in the retrieval steps it
 * records as the REST answer shows them (decisions §16). A run's citations and its answer's are
 * the same JSON.
 */
export function citationBody(citation: Citation) {
  return {
    index: citation.index,
    document_id: citation.documentId,
    chunk_id: citation.chunkId,
    title: citation.title ?? null,
    page: citation.page ?? null,
    heading: citation.heading,
    snippet: citation.snippet,
  };
}
