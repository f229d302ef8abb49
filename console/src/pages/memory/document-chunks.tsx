import type { DocumentChunk, MemoryDocument } from '@agent-platform/client';
import { getRouteApi, Link, useNavigate } from '@tanstack/react-router';
import { useEffect, useId, useRef } from 'react';
import { Empty, QueryState } from '../../ui/feedback.js';
import { Pager } from '../../ui/page.js';
import { passagePlace } from './document-facts.js';
import { CHUNKS_PER_PAGE, useChunkPosition, useChunks } from './document-query.js';

const route = getRouteApi('/app/memory/documents/$documentId');

/**
 * The document's chunks in document order, a page at a time. A citation's link names its chunk
 * (`chunk`) but not its page: the chunk is looked for, its page shown, and it is scrolled to,
 * focused and marked. Paging on keeps the mark for when the reader comes back to it.
 */
export function DocumentChunks({ document }: { document: MemoryDocument }) {
  const search = route.useSearch();
  const navigate = useNavigate();
  const titleId = useId();
  const located = useChunkPosition(document.id, document.refreshed_at, search.page === undefined ? search.chunk : undefined);
  const locating = search.page === undefined && search.chunk !== undefined;
  const page = search.page ?? (typeof located.data === 'number' ? Math.floor(located.data / CHUNKS_PER_PAGE) + 1 : 1);
  const chunks = useChunks(document.id, document.refreshed_at, page, !locating || located.data !== undefined);
  return (
    <section className="document-chunks" aria-labelledby={titleId}>
      <h2 id={titleId}>Chunks</h2>
      {locating && located.data === null ? (
        <p className="notice notice-warn" role="status">
          The passage the citation pointed at is no longer in this document: it changed when the document was read again.
        </p>
      ) : null}
      {locating && located.data === undefined ? (
        <QueryState query={located} loadingLabel="Finding the cited passage…">
          {() => null}
        </QueryState>
      ) : document.chunks === 0 ? (
        <Empty title={document.status === 'processing' ? 'Being read' : 'No chunks'}>
          <p>{document.status === 'processing' ? 'Its chunks show here once it is read; this page follows it.' : document.status === 'failed' ? 'Nothing was stored: see why above.' : 'It held no text to keep.'}</p>
        </Empty>
      ) : (
        <QueryState query={chunks} loadingLabel="Loading its chunks…">
          {(list) => (
            <>
              <ol className="chunks" aria-label={shownRange(list.items, list.total)}>
                {list.items.map((chunk) => (
                  <ChunkView key={chunk.id} chunk={chunk} agentId={document.agent_id} cited={chunk.id === search.chunk} />
                ))}
              </ol>
              <Pager page={page} perPage={CHUNKS_PER_PAGE} total={list.total} onPage={(next) => void navigate({ to: '/memory/documents/$documentId', params: { documentId: document.id }, search: { ...search, page: next } })} />
            </>
          )}
        </QueryState>
      )}
    </section>
  );
}

function ChunkView({ chunk, agentId, cited }: { chunk: DocumentChunk; agentId: string; cited: boolean }) {
  const item = useRef<HTMLLIElement>(null);
  // The passage a citation led here to: brought into view and given the focus, so a screen reader starts there.
  useEffect(() => {
    if (!cited) return;
    item.current?.scrollIntoView({ block: 'center' });
    item.current?.focus({ preventScroll: true });
  }, [cited]);
  const place = passagePlace(chunk);
  return (
    <li ref={item} id={`chunk-${chunk.id}`} className={cited ? 'chunk chunk-cited' : 'chunk'} tabIndex={cited ? -1 : undefined} aria-current={cited ? 'true' : undefined}>
      <div className="chunk-header">
        <span className="chunk-number">Chunk {chunk.position + 1}</span>
        {place.map((part) => (
          <span key={part} className="chunk-place">
            {part}
          </span>
        ))}
        {cited ? <span className="badge badge-ready">Cited</span> : null}
        <Link className="chunk-history" to="/memory" search={{ agent_id: agentId, item: chunk.id }} aria-label={`History of chunk ${chunk.position + 1}`}>
          History
        </Link>
      </div>
      <p className="chunk-text">{chunk.text}</p>
    </li>
  );
}

/** What a page of chunks holds, for screen readers: "Chunks 21 to 40 of 57". */
function shownRange(items: readonly DocumentChunk[], total: number): string {
  const [first, last] = [items[0], items.at(-1)];
  return first && last ? `Chunks ${first.position + 1} to ${last.position + 1} of ${total}` : 'Chunks';
}
