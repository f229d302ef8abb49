import type { Citation } from '@agent-platform/client';
import { Link } from '@tanstack/react-router';
import { useId } from 'react';
import { passagePlace } from '../memory/document-facts.js';

/**
 * The document passages a reply was given, numbered as it cites them ([1], [2]): each names its
 * document, page and headings, quotes its opening words and links to the passage on the
 * document's page.
 */
export function TurnCitations({ citations }: { citations: readonly Citation[] }) {
  const titleId = useId();
  if (citations.length === 0) return null;
  return (
    <div className="turn-citations">
      <span className="turn-memory-title" id={titleId}>
        Sources ({citations.length})
      </span>
      <ol aria-labelledby={titleId}>
        {citations.map((citation) => (
          <li key={citation.chunk_id}>
            <Link to="/memory/documents/$documentId" params={{ documentId: citation.document_id }} search={{ chunk: citation.chunk_id }}>
              [{citation.index}] {[citation.title ?? 'Untitled document', ...passagePlace(citation)].join(' · ')}
            </Link>
            <q className="citation-snippet">{citation.snippet}</q>
          </li>
        ))}
      </ol>
    </div>
  );
}
