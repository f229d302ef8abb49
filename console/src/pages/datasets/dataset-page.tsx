import './datasets.css';
import type { Dataset, DatasetItem } from '@agent-platform/client';
import { useMutation } from '@tanstack/react-query';
import { getRouteApi, Link, useNavigate } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { call } from '../../api/call.js';
import { checkedValue, parseOptionalJsonObject } from '../../api/local-errors.js';
import { useClient, useInvalidate, useTenantQuery } from '../../api/session-context.js';
import { ConfirmButton } from '../../ui/confirm-button.js';
import { CursorPager } from '../../ui/cursor-pager.js';
import { DataTable, type Column } from '../../ui/data-table.js';
import { Empty, ErrorNotice, QueryState } from '../../ui/feedback.js';
import { Field, formValues } from '../../ui/form.js';
import { FormActions } from '../../ui/form-actions.js';
import { JsonField } from '../../ui/json-field.js';
import { Page, Time } from '../../ui/page.js';
import { EvalLinks } from '../evals/eval-links.js';
import { BulkAdd } from './bulk-add.js';
import { useDataset } from './dataset-query.js';
import { useDeleteDataset } from './delete-dataset.js';

const LIMIT = 20;
const route = getRouteApi('/app/datasets/$datasetId');

/** A dataset: what it is, its items newest first, and the ways to add more (one, or many from CSV or JSONL). */
export function DatasetPage() {
  const { datasetId } = route.useParams();
  const { cursor, back = [] } = route.useSearch();
  const navigate = useNavigate();
  const [adding, setAdding] = useState<'one' | 'many' | undefined>(undefined);
  const dataset = useDataset(datasetId);
  const items = useTenantQuery(['datasets', datasetId, 'items', cursor ?? ''], (client) =>
    call(client.GET('/api/v1/datasets/{dataset_id}/items', { params: { path: { dataset_id: datasetId }, query: { limit: LIMIT, ...(cursor ? { cursor } : {}) } } })),
  );
  const remove = useDeleteDataset(datasetId);
  return (
    <Page
      title={dataset.data?.name ?? 'Dataset'}
      actions={
        dataset.data ? (
          <>
            <button type="button" onClick={() => setAdding('one')} disabled={adding === 'one'}>
              Add an item
            </button>
            <button type="button" className="secondary" onClick={() => setAdding('many')} disabled={adding === 'many'}>
              Add from CSV or JSONL
            </button>
            <EvalLinks of={{ dataset_id: datasetId }} />
            <ConfirmButton
              label="Delete"
              question={`Delete ${dataset.data.name} and all its items?`}
              confirmLabel="Delete dataset"
              pending={remove.isPending}
              pendingLabel="Deleting…"
              onConfirm={() => remove.mutate()}
            />
          </>
        ) : null
      }
    >
      <p className="breadcrumbs">
        <Link to="/datasets">Datasets</Link>
      </p>
      <ErrorNotice error={remove.error} title="Could not delete the dataset" />
      <QueryState query={dataset} loadingLabel="Loading the dataset…">
        {(found) => (
          <>
            <DatasetFacts dataset={found} />
            {adding === 'one' ? <AddItem datasetId={found.id} onDone={() => setAdding(undefined)} /> : null}
            {adding === 'many' ? <BulkAdd datasetId={found.id} onDone={() => setAdding(undefined)} /> : null}
          </>
        )}
      </QueryState>
      <section aria-labelledby="items-title">
        <h2 id="items-title">Items</h2>
        <QueryState query={items} loadingLabel="Loading items…">
          {(list) => (
            <>
              <DataTable
                label="Item list"
                columns={itemColumns(datasetId)}
                rows={list.items}
                rowKey={(item) => item.id}
                empty={
                  <Empty title="No items yet">
                    <p>Add them one by one, or many at once from CSV (columns message, expected, user_id) or JSONL (one item object a line).</p>
                  </Empty>
                }
              />
              <CursorPager cursor={cursor} back={back} nextCursor={list.next_cursor} onPage={(position) => void navigate({ to: '/datasets/$datasetId', params: { datasetId }, search: position })} />
            </>
          )}
        </QueryState>
      </section>
    </Page>
  );
}

function DatasetFacts({ dataset }: { dataset: Dataset }) {
  return (
    <dl className="facts">
      <dt>Items</dt>
      <dd>{dataset.item_count.toLocaleString()}</dd>
      {dataset.description ? (
        <>
          <dt>Description</dt>
          <dd>{dataset.description}</dd>
        </>
      ) : null}
      <dt>Created</dt>
      <dd>
        <Time value={dataset.created_at} />
      </dd>
      <dt>Updated</dt>
      <dd>
        <Time value={dataset.updated_at} />
      </dd>
    </dl>
  );
}

function itemColumns(datasetId: string): Column<DatasetItem>[] {
  return [
    { header: 'Message', cell: (item) => <span className="dataset-text">{item.input.message}</span> },
    { header: 'Expected', cell: (item) => (item.expected === null ? <span className="muted">—</span> : <span className="dataset-text">{item.expected}</span>) },
    { header: 'End user', cell: (item) => (item.input.user_id ? <code>{item.input.user_id}</code> : <span className="muted">—</span>) },
    { header: 'Metadata', cell: (item) => (item.metadata ? <code>{JSON.stringify(item.metadata)}</code> : <span className="muted">—</span>) },
    { header: 'Added', cell: (item) => <Time value={item.created_at} /> },
    { header: 'Actions', headerHidden: true, cell: (item) => <DeleteItem datasetId={datasetId} item={item} /> },
  ];
}

function DeleteItem({ datasetId, item }: { datasetId: string; item: DatasetItem }) {
  const client = useClient();
  const invalidate = useInvalidate();
  const remove = useMutation({
    mutationFn: () => call(client.DELETE('/api/v1/datasets/{dataset_id}/items/{item_id}', { params: { path: { dataset_id: datasetId, item_id: item.id } } })),
    onSuccess: () => invalidate('datasets'),
  });
  return (
    <>
      <ConfirmButton
        label="Delete"
        accessibleLabel={`Delete the item ${item.input.message.slice(0, 40)}`}
        question="Delete this item?"
        confirmLabel="Delete item"
        pending={remove.isPending}
        pendingLabel="Deleting…"
        onConfirm={() => remove.mutate()}
      />
      <ErrorNotice error={remove.error} title="Could not delete the item" />
    </>
  );
}

function AddItem({ datasetId, onDone }: { datasetId: string; onDone: () => void }) {
  const client = useClient();
  const invalidate = useInvalidate();
  const [added, setAdded] = useState(0);
  const mutation = useMutation({
    mutationFn: ({ message, user_id, expected, metadata }: Record<string, string>) => {
      const parsed = checkedValue(parseOptionalJsonObject(metadata ?? '', 'metadata', '{"topic": "refunds"}'));
      return call(
        client.POST('/api/v1/datasets/{dataset_id}/items', {
          params: { path: { dataset_id: datasetId } },
          body: { input: { message: message ?? '', ...(user_id ? { user_id } : {}) }, ...(expected ? { expected } : {}), ...(parsed ? { metadata: parsed } : {}) },
        }),
      );
    },
    onSuccess: () => invalidate('datasets'),
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = event.currentTarget;
    mutation.mutate(formValues(form), {
      onSuccess: () => {
        // Ready for the next one.
        form.reset();
        setAdded((count) => count + 1);
      },
    });
  };
  return (
    <form className="card" onSubmit={submit} aria-labelledby="add-item-title" noValidate>
      <h2 id="add-item-title">Add an item</h2>
      <ErrorNotice error={mutation.error} title="Could not add the item" />
      {added > 0 ? (
        <p className="notice notice-info" role="status">
          Added {added === 1 ? 'an item' : `${added} items`}: the form is ready for the next.
        </p>
      ) : null}
      <Field label="Message" field="input.message" error={mutation.error} hint="What the agent is told, as a chat message.">
        <textarea name="message" rows={3} required autoFocus />
      </Field>
      <Field label="End user (optional)" field="input.user_id" error={mutation.error} hint="The end user of your application the turn is for: the agent sees their memories.">
        <input name="user_id" autoComplete="off" />
      </Field>
      <Field label="Expected answer (optional)" field="expected" error={mutation.error} hint="What the agent should answer, for scorers to compare with.">
        <textarea name="expected" rows={3} />
      </Field>
      <JsonField label="Metadata (JSON, optional)" field="metadata" error={mutation.error} rows={3} hint="An object kept with the item." />
      <FormActions submitLabel="Add item" pendingLabel="Adding…" pending={mutation.isPending} cancelLabel="Close" onCancel={onDone} />
    </form>
  );
}
