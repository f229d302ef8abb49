import './datasets.css';
import type { Dataset } from '@agent-platform/client';
import { useMutation } from '@tanstack/react-query';
import { getRouteApi, Link, useNavigate } from '@tanstack/react-router';
import type { FormEvent } from 'react';
import { call } from '../../api/call.js';
import { useClient, useInvalidate, useTenantQuery } from '../../api/session-context.js';
import { ConfirmButton } from '../../ui/confirm-button.js';
import { PagedTable, type Column } from '../../ui/data-table.js';
import { Empty, ErrorNotice } from '../../ui/feedback.js';
import { formValues } from '../../ui/form.js';
import { FormActions, useCreateForm } from '../../ui/form-actions.js';
import { NameAndDescription } from '../../ui/name-fields.js';
import { Page, Time } from '../../ui/page.js';
import { useDeleteDataset } from './delete-dataset.js';

const PER_PAGE = 20;
const route = getRouteApi('/app/datasets');

/** decisions §16: inputs to evaluate agents on, each with what it should answer. */
export function DatasetsPage() {
  const { page = 1 } = route.useSearch();
  const navigate = useNavigate();
  const creating = useCreateForm();
  const datasets = useTenantQuery(['datasets', 'list', page], (client) => call(client.GET('/api/v1/datasets', { params: { query: { page, per_page: PER_PAGE } } })));
  return (
    <Page
      title="Datasets"
      actions={
        <button type="button" onClick={creating.start} disabled={creating.open}>
          New dataset
        </button>
      }
    >
      {creating.open ? <CreateDataset onDone={creating.cancel} /> : null}
      <PagedTable
        query={datasets}
        loadingLabel="Loading datasets…"
        page={page}
        perPage={PER_PAGE}
        onPage={(next) => void navigate({ to: '/datasets', search: { page: next } })}
        label="Dataset list"
        columns={DATASET_COLUMNS}
        rowKey={(dataset) => dataset.id}
        empty={
          <Empty title="No datasets yet">
            <p>A dataset holds messages to try an agent on, each with the answer it should give. Create one, then add its items one by one or from a CSV or JSONL file.</p>
          </Empty>
        }
      />
    </Page>
  );
}

const DATASET_COLUMNS: Column<Dataset>[] = [
  {
    header: 'Name',
    cell: (dataset) => (
      <Link to="/datasets/$datasetId" params={{ datasetId: dataset.id }} search={{}}>
        {dataset.name}
      </Link>
    ),
  },
  { header: 'Description', cell: (dataset) => dataset.description ?? <span className="muted">—</span> },
  { header: 'Items', cell: (dataset) => dataset.item_count.toLocaleString() },
  { header: 'Updated', cell: (dataset) => <Time value={dataset.updated_at} /> },
  { header: 'Actions', headerHidden: true, cell: (dataset) => <DeleteDataset dataset={dataset} /> },
];

function DeleteDataset({ dataset }: { dataset: Dataset }) {
  const remove = useDeleteDataset(dataset.id);
  return (
    <>
      <ConfirmButton
        label="Delete"
        accessibleLabel={`Delete ${dataset.name}`}
        question={`Delete ${dataset.name} and its ${dataset.item_count === 1 ? 'item' : `${dataset.item_count.toLocaleString()} items`}?`}
        confirmLabel="Delete dataset"
        pending={remove.isPending}
        pendingLabel="Deleting…"
        onConfirm={() => remove.mutate()}
      />
      <ErrorNotice error={remove.error} title="Could not delete the dataset" />
    </>
  );
}

function CreateDataset({ onDone }: { onDone: () => void }) {
  const client = useClient();
  const invalidate = useInvalidate();
  const navigate = useNavigate();
  const mutation = useMutation({
    mutationFn: ({ name, description }: { name: string; description: string }) => call(client.POST('/api/v1/datasets', { body: { name, ...(description ? { description } : {}) } })),
    onSuccess: async (dataset) => {
      await invalidate('datasets');
      onDone();
      await navigate({ to: '/datasets/$datasetId', params: { datasetId: dataset.id }, search: {} });
    },
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const { name = '', description = '' } = formValues(event.currentTarget);
    mutation.mutate({ name, description });
  };
  return (
    <form className="card" onSubmit={submit} aria-labelledby="new-dataset-title" noValidate>
      <h2 id="new-dataset-title">New dataset</h2>
      <ErrorNotice error={mutation.error} title="Could not create the dataset" />
      <NameAndDescription error={mutation.error} />
      <FormActions submitLabel="Create dataset" pendingLabel="Creating…" pending={mutation.isPending} onCancel={onDone} />
    </form>
  );
}
