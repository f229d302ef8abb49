import type { Citation } from '@agent-platform/proto/agents/v1/documents';
import { headingOf } from '../memory/embedded-text.js';

/** How much of a chunk a citation shows. */
const SNIPPET_MAX = 240;

/**
 * decisions §17: the document chunks among the memories a turn was given, in the order the model's
 * context numbered them (`memoryContext`): `index` is the [n] an answer cites a chunk by.
 */
export function citationsOf(memories: readonly { id: string; content: string; metadata: Record<string, unknown> }[]): Citation[] {
  return memories.flatMap((memory, position) => {
    const { document_id: documentId, title, page } = memory.metadata;
    if (typeof documentId !== 'string') return [];
    return [
      {
        index: position + 1,
        documentId,
        chunkId: memory.id,
        title: typeof title === 'string' ? title : undefined,
        page: typeof page === 'number' && Number.isSafeInteger(page) ? page : undefined,
        heading: headingOf(memory.metadata),
        snippet: snippetOf(memory.content),
      },
    ];
  });
}

/** The chunk's opening words, cut at a word's end with an ellipsis when it goes on. */
function snippetOf(content: string): string {
  const text = content.replace(/\s+/g, ' ').trim();
  if (text.length <= SNIPPET_MAX) return text;
  const cut = text.lastIndexOf(' ', SNIPPET_MAX);
  return `${text.slice(0, cut > SNIPPET_MAX / 2 ? cut : SNIPPET_MAX)}…`;
}
