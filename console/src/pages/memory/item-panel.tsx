import type { MemoryHistoryEntry, MemoryUpdate } from '@agent-platform/client';
import { useMutation } from '@tanstack/react-query';
import { getRouteApi, Link } from '@tanstack/react-router';
import { useEffect, useRef, useState, type FormEvent } from 'react';
import { call } from '../../api/call.js';
import { checkedValue, localValidationError, parseOptionalJsonObject } from '../../api/local-errors.js';
import { useClient, useInvalidate, useTenantQuery } from '../../api/session-context.js';
import { ConfirmButton } from '../../ui/confirm-button.js';
import { DataTable } from '../../ui/data-table.js';
import { ErrorNotice, QueryState } from '../../ui/feedback.js';
import { Field, formValues } from '../../ui/form.js';
import { FormActions } from '../../ui/form-actions.js';
import { JsonField, jsonObjectText } from '../../ui/json-field.js';
import { EXACT_LINK } from '../../ui/links.js';
import { Time } from '../../ui/page.js';
import { formatScore, MetadataList, type ShownItem } from './items-table.js';
import { BLANK_CONTENT, METADATA_EXAMPLE } from './memory-input.js';

const route = getRouteApi('/app/memory');

/**
 * One item, opened from the list or a search: what it holds, its edit and delete, and every
 * change it went through. There is no read of a single item, so what it holds comes from the
 * list or search it was opened from; its history is read by id, and outlives the item.
 */
export function ItemPanel({ itemId, item }: { itemId: string; item: ShownItem | undefined }) {
  const search = route.useSearch();
  const client = useClient();
  const invalidate = useInvalidate();
  const heading = useRef<HTMLHeadingElement>(null);
  const [editing, setEditing] = useState(false);
  const history = useTenantQuery(['memory', 'history', itemId], (api) => call(api.GET('/api/v1/memory/{memory_id}/history', { params: { path: { memory_id: itemId } } })));
  const remove = useMutation({
    mutationFn: () => call(client.DELETE('/api/v1/memory/{memory_id}', { params: { path: { memory_id: itemId } } })),
    onSuccess: async () => {
      heading.current?.focus();
      await invalidate('memory');
    },
  });
  // Opening an item (it is keyed by its id) takes the reader to it, wherever in the list they were.
  useEffect(() => heading.current?.focus(), []);
  const deletion = history.data?.history.findLast((entry) => entry.event === 'DELETE');
  const backToItem = () => {
    setEditing(false);
    heading.current?.focus();
  };
  return (
    <section className="card memory-item" aria-labelledby="memory-item-title">
      <div className="memory-item-header">
        <h2 id="memory-item-title" ref={heading} tabIndex={-1}>
          Memory item <code>{itemId}</code>
        </h2>
        <Link className="button secondary" to="/memory" search={{ ...search, item: undefined }} {...EXACT_LINK}>
          Close
        </Link>
      </div>
      {deletion ? (
        <p className="notice memory-deleted" role="status">
          This item was deleted <Time value={deletion.created_at} />; its history is kept.
        </p>
      ) : item ? (
        <>
          <ItemFacts item={item} />
          {editing ? (
            <EditItem itemId={itemId} item={item} onDone={backToItem} />
          ) : (
            <div className="form-actions">
              <button type="button" onClick={() => setEditing(true)}>
                Edit
              </button>
              <ConfirmButton
                label="Delete"
                className="secondary"
                question="Delete this item? It leaves the agent's memory and its searches at once; its history is kept."
                confirmLabel="Delete item"
                cancelLabel="Keep it"
                pending={remove.isPending}
                pendingLabel="Deleting…"
                onConfirm={() => remove.mutate()}
              />
            </div>
          )}
          <ErrorNotice error={remove.error} title="Could not delete the item" />
        </>
      ) : history.data ? (
        <p className="muted">This item is not among the items shown now (another page, other filters or another search); its history is below.</p>
      ) : null}
      <h3>History</h3>
      <QueryState query={history} loadingLabel="Loading its history…">
        {(found) => <HistoryTable entries={found.history} />}
      </QueryState>
    </section>
  );
}

function ItemFacts({ item }: { item: ShownItem }) {
  return (
    <dl className="facts">
      <dt>Content</dt>
      <dd className="memory-full-content">{item.content}</dd>
      {item.score === undefined ? null : (
        <>
          <dt>Score</dt>
          <dd>{formatScore(item.score)}</dd>
        </>
      )}
      <dt>Type</dt>
      <dd>{item.memory_type}</dd>
      <dt>End user</dt>
      <dd>{item.user_id ?? <span className="muted">shared by every end user</span>}</dd>
      <dt>Metadata</dt>
      <dd>
        <MetadataList metadata={item.metadata} />
      </dd>
      <dt>Created</dt>
      <dd>
        <Time value={item.created_at} />
      </dd>
      {item.updated_at === undefined ? null : (
        <>
          <dt>Updated</dt>
          <dd>{item.updated_at ? <Time value={item.updated_at} /> : <span className="muted">never</span>}</dd>
        </>
      )}
    </dl>
  );
}

/** Changes the content and the metadata (replaced whole); only what changed is sent. */
function EditItem({ itemId, item, onDone }: { itemId: string; item: ShownItem; onDone: () => void }) {
  const client = useClient();
  const invalidate = useInvalidate();
  const mutation = useMutation({
    mutationFn: async ({ content, metadata }: { content: string; metadata: string }) => {
      // The API reads an empty content as none sent (it would keep the old one, or change only the
      // metadata), so emptied content is refused here with the API's own rule.
      if (content === '') throw localValidationError('content', BLANK_CONTENT);
      const newMetadata = checkedValue(parseOptionalJsonObject(metadata, 'metadata', METADATA_EXAMPLE)) ?? {};
      const change: MemoryUpdate = {
        ...(content === item.content ? {} : { content }),
        ...(JSON.stringify(newMetadata) === JSON.stringify(item.metadata) ? {} : { metadata: newMetadata }),
      };
      // Nothing changed: nothing to send, nor to record in its history.
      if (Object.keys(change).length === 0) return false;
      await call(client.PATCH('/api/v1/memory/{memory_id}', { params: { path: { memory_id: itemId } }, body: change }));
      return true;
    },
    onSuccess: async (sent) => {
      if (sent) await invalidate('memory');
      onDone();
    },
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const { content = '', metadata = '' } = formValues(event.currentTarget);
    mutation.mutate({ content, metadata });
  };
  return (
    <form className="memory-edit" onSubmit={submit} aria-labelledby="memory-edit-title" noValidate>
      <h3 id="memory-edit-title">Edit item</h3>
      <ErrorNotice error={mutation.error} title="Could not save the item" />
      <Field label="Content" field="content" error={mutation.error} hint="New content is embedded again, so searches find it by its new meaning.">
        <textarea name="content" rows={4} defaultValue={item.content} autoFocus />
      </Field>
      <JsonField label="Metadata" field="metadata" error={mutation.error} hint="A JSON object that replaces the metadata whole; empty for none." rows={4} defaultValue={jsonObjectText(item.metadata)} />
      <FormActions submitLabel="Save changes" pendingLabel="Saving…" pending={mutation.isPending} onCancel={onDone} />
    </form>
  );
}

const SOURCES: Record<MemoryHistoryEntry['source'], string> = {
  api: 'API',
  extraction: 'Extracted from a chat turn',
  consolidation: 'Consolidated from a session',
  document: 'Document',
};

function HistoryTable({ entries }: { entries: MemoryHistoryEntry[] }) {
  return (
    <DataTable
      caption="Every change, oldest first"
      className="memory-history"
      rows={entries}
      // Entries have no id of their own; their order never changes (oldest first, append-only).
      rowKey={(_entry, index) => index}
      columns={[
        { header: 'Change', cell: (entry) => <span className={`badge memory-event-${entry.event.toLowerCase()}`}>{entry.event}</span> },
        { header: 'Before', className: 'memory-content', cell: (entry) => entry.old_content ?? <span className="muted">—</span> },
        { header: 'After', className: 'memory-content', cell: (entry) => entry.new_content ?? <span className="muted">—</span> },
        { header: 'Source', cell: (entry) => SOURCES[entry.source] },
        { header: 'Session', cell: (entry) => (entry.session_id ? <code>{entry.session_id}</code> : <span className="muted">—</span>) },
        { header: 'When', cell: (entry) => <Time value={entry.created_at} /> },
      ]}
    />
  );
}
