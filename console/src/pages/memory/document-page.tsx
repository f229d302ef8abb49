import type { MemoryDocument } from '@agent-platform/client';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { getRouteApi, Link, useNavigate } from '@tanstack/react-router';
import { call } from '../../api/call.js';
import { useClient, useInvalidate, useSession } from '../../api/session-context.js';
import { ConfirmButton } from '../../ui/confirm-button.js';
import { ErrorNotice, QueryState } from '../../ui/feedback.js';
import { Page, Time } from '../../ui/page.js';
import { useAgent } from '../agents/agent-query.js';
import { DocumentChunks } from './document-chunks.js';
import { documentName, DocumentStatus, formatBytes, isProcessing, refreshLabel, SOURCE_LABELS } from './document-facts.js';
import { useDocument } from './document-query.js';
import { MetadataList } from './items-table.js';
import './documents.css';
import './memory.css';

const route = getRouteApi('/app/memory/documents/$documentId');

/**
 * One document: what it is and how its parsing went, its chunks a page at a time (with the one a
 * citation points at found and marked), and its original to download, refresh or delete. Read
 * again while it is processing.
 */
export function DocumentPage() {
  const { documentId } = route.useParams();
  const document = useDocument(documentId);
  const agent = useAgent(document.data?.agent_id);
  const agentId = document.data?.agent_id;
  return (
    <Page title={document.data ? documentName(document.data) : 'Document'}>
      <p className="breadcrumbs">
        <Link to="/memory" search={agentId ? { agent_id: agentId } : {}}>
          Memory
        </Link>
        {agentId ? (
          <>
            {' '}
            ›{' '}
            <Link to="/memory" search={{ agent_id: agentId, view: 'documents' }}>
              Documents of {agent.data?.name ?? 'the agent'}
            </Link>
          </>
        ) : null}
      </p>
      <QueryState query={document} loadingLabel="Loading the document…">
        {(found) => (
          <>
            {found.status === 'ready' && found.error ? (
              <p className="notice notice-warn" role="status">
                Its last refresh failed: {found.error} It keeps the passages it had.
              </p>
            ) : null}
            <DocumentActions document={found} />
            <DocumentFacts document={found} />
            <DocumentChunks document={found} />
          </>
        )}
      </QueryState>
    </Page>
  );
}

function DocumentFacts({ document }: { document: MemoryDocument }) {
  return (
    <dl className="facts card document-facts">
      <dt>Status</dt>
      <dd>
        <DocumentStatus document={document} />
      </dd>
      <dt>Source</dt>
      <dd>
        {SOURCE_LABELS[document.source]}
        {document.url ? (
          <>
            {' '}
            <code>{document.url}</code>
          </>
        ) : null}
        {document.filename ? (
          <>
            {' '}
            <code>{document.filename}</code>
          </>
        ) : null}
      </dd>
      {document.source === 'url' ? (
        <>
          <dt>Fetched again</dt>
          <dd>{refreshLabel(document.refresh_seconds)}</dd>
        </>
      ) : null}
      <dt>Type</dt>
      <dd>{document.content_type ?? <span className="muted">not known yet</span>}</dd>
      <dt>Size</dt>
      <dd>{formatBytes(document.bytes)}</dd>
      <dt>Chunks</dt>
      <dd>{document.chunks.toLocaleString()}</dd>
      <dt>Pages</dt>
      <dd>{document.pages?.toLocaleString() ?? <span className="muted">—</span>}</dd>
      <dt>End user</dt>
      <dd>{document.user_id ?? <span className="muted">shared by every end user</span>}</dd>
      <dt>Metadata</dt>
      <dd>
        <MetadataList metadata={document.metadata} />
      </dd>
      <dt>Added</dt>
      <dd>
        <Time value={document.created_at} />
      </dd>
      <dt>Refreshed</dt>
      <dd>{document.refreshed_at ? <Time value={document.refreshed_at} /> : <span className="muted">not yet</span>}</dd>
    </dl>
  );
}

function DocumentActions({ document }: { document: MemoryDocument }) {
  const client = useClient();
  const invalidate = useInvalidate();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const { state } = useSession();
  const download = useMutation({
    mutationFn: async () => saveBlob(await call(client.GET('/api/v1/memory/documents/{document_id}/file', { params: { path: { document_id: document.id } }, parseAs: 'blob' })), document.filename ?? document.id),
  });
  const refresh = useMutation({
    mutationFn: () => call(client.POST('/api/v1/memory/documents/{document_id}/refresh', { params: { path: { document_id: document.id } } })),
    onSuccess: () => invalidate('memory'),
  });
  const remove = useMutation({
    mutationFn: () => call(client.DELETE('/api/v1/memory/documents/{document_id}', { params: { path: { document_id: document.id } } })),
    onSuccess: async () => {
      await navigate({ to: '/memory', search: { agent_id: document.agent_id, view: 'documents' } });
      // Its own reads would answer 404 now: dropped rather than read again.
      queryClient.removeQueries({ queryKey: [state.tenantId, 'memory', 'document', document.id] });
      await invalidate('memory');
    },
  });
  return (
    <>
      <div className="form-actions document-actions">
        <button type="button" className="secondary" onClick={() => download.mutate()} disabled={download.isPending}>
        {download.isPending ? 'Downloading…' : 'Download original'}
      </button>
      <button type="button" className="secondary" title={document.source === 'url' ? 'Fetch the page again and read it' : 'Read the original again'} onClick={() => refresh.mutate()} disabled={refresh.isPending || isProcessing(document)}>
        {refresh.isPending ? 'Refreshing…' : 'Refresh'}
      </button>
      <ConfirmButton
        label="Delete"
        question={`Delete ${documentName(document)} with its ${document.chunks === 1 ? 'chunk' : `${document.chunks.toLocaleString()} chunks`} and its original?`}
        confirmLabel="Delete document"
        cancelLabel="Keep it"
        pending={remove.isPending}
        pendingLabel="Deleting…"
        onConfirm={() => remove.mutate()}
      />
      </div>
      <ErrorNotice error={download.error} title="Could not download the original" />
      <ErrorNotice error={refresh.error} title="Could not refresh the document" />
      <ErrorNotice error={remove.error} title="Could not delete the document" />
    </>
  );
}

/** Saves what was downloaded as a file of that name: the original needs the token, so a plain link cannot fetch it. */
function saveBlob(blob: Blob, filename: string): void {
  const url = URL.createObjectURL(blob);
  const link = window.document.createElement('a');
  link.href = url;
  link.download = filename;
  link.click();
  // The download reads the blob after this task; the address is let go once it has.
  setTimeout(() => URL.revokeObjectURL(url), 0);
}
