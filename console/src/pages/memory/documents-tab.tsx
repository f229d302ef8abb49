import type { Agent, MemoryDocument } from '@agent-platform/client';
import { Link, useNavigate } from '@tanstack/react-router';
import { PagedTable, type Column } from '../../ui/data-table.js';
import { Empty } from '../../ui/feedback.js';
import { Time } from '../../ui/page.js';
import { documentName, DocumentStatus, formatBytes, refreshLabel, SOURCE_LABELS } from './document-facts.js';
import { DOCUMENTS_PER_PAGE, useDocuments } from './document-query.js';
import { DocumentUpload } from './document-upload.js';
import { PageImport } from './page-import.js';
import './documents.css';

/**
 * The agent's documents (decisions §17): files uploaded and pages imported here, texts added
 * through the API, each with how far its parsing got; the list is read again while any of them
 * is still processing.
 */
export function DocumentsTab({ agentId, agent, page }: { agentId: string; agent: Agent | undefined; page: number }) {
  const navigate = useNavigate();
  const documents = useDocuments(agentId, page);
  return (
    <>
      {agent && !agent.memory_types.includes('semantic') ? (
        <p className="notice notice-warn">
          {agent.name} does not keep semantic memory, where a document's passages are stored: the platform refuses its documents until{' '}
          <Link to="/agents/$agentId" params={{ agentId }} search={{}}>
            its settings
          </Link>{' '}
          add it.
        </p>
      ) : null}
      {agent ? (
        <div className="document-sources">
          <DocumentUpload agentId={agentId} />
          <PageImport agentId={agentId} />
        </div>
      ) : null}
      <PagedTable
        query={documents}
        loadingLabel="Loading documents…"
        page={page}
        perPage={DOCUMENTS_PER_PAGE}
        onPage={(next) => void navigate({ to: '/memory', search: { agent_id: agentId, view: 'documents', page: next > 1 ? next : undefined } })}
        caption="Documents, newest first"
        className="documents"
        columns={DOCUMENT_COLUMNS}
        rowKey={(document) => document.id}
        empty={
          <Empty title="No documents yet">
            <p>Upload files or import a web page above; texts added with POST /api/v1/memory/documents show here too.</p>
          </Empty>
        }
      />
    </>
  );
}

const DOCUMENT_COLUMNS: Column<MemoryDocument>[] = [
  {
    header: 'Document',
    className: 'document-name',
    cell: (document) => (
      <Link to="/memory/documents/$documentId" params={{ documentId: document.id }} search={{}}>
        {documentName(document)}
      </Link>
    ),
  },
  { header: 'Status', cell: (document) => <DocumentStatus document={document} /> },
  {
    header: 'Source',
    cell: (document) => (
      <>
        {SOURCE_LABELS[document.source]}
        {document.refresh_seconds === null ? null : <span className="muted"> · {refreshLabel(document.refresh_seconds).toLowerCase()}</span>}
      </>
    ),
  },
  { header: 'Size', className: 'number', cell: (document) => formatBytes(document.bytes) },
  { header: 'Chunks', className: 'number', cell: (document) => document.chunks.toLocaleString() },
  { header: 'Pages', className: 'number', cell: (document) => document.pages?.toLocaleString() ?? <span className="muted">—</span> },
  { header: 'Refreshed', cell: (document) => (document.refreshed_at ? <Time value={document.refreshed_at} /> : <span className="muted">not yet</span>) },
];
