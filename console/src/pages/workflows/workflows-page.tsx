import './workflows.css';
import type { RequestBody, WorkflowSummary } from '@agent-platform/client';
import { useMutation } from '@tanstack/react-query';
import { getRouteApi, Link, useNavigate } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { call } from '../../api/call.js';
import { checkedValue, parseJsonObject } from '../../api/local-errors.js';
import { useClient, useInvalidate, useTenantQuery } from '../../api/session-context.js';
import { Empty, ErrorNotice } from '../../ui/feedback.js';
import { PagedTable, type Column } from '../../ui/data-table.js';
import { formValues } from '../../ui/form.js';
import { FormActions } from '../../ui/form-actions.js';
import { NameAndDescription } from '../../ui/name-fields.js';
import { Page, Time } from '../../ui/page.js';
import { DefinitionEditor } from './definition-editor.js';
import { EXAMPLE_GRAPH, GRAPH_HINT } from './graph-help.js';

const PER_PAGE = 20;
const route = getRouteApi('/app/workflows');

export function WorkflowsPage() {
  const { page = 1 } = route.useSearch();
  const navigate = useNavigate();
  const [creating, setCreating] = useState(false);
  const workflows = useTenantQuery(['workflows', 'list', page], (client) => call(client.GET('/api/v1/workflows', { params: { query: { page, per_page: PER_PAGE } } })));
  return (
    <Page
      title="Workflows"
      actions={
        <button type="button" onClick={() => setCreating(true)} disabled={creating}>
          New workflow
        </button>
      }
    >
      {creating ? <CreateWorkflow onDone={() => setCreating(false)} /> : null}
      <PagedTable
        query={workflows}
        loadingLabel="Loading workflows…"
        page={page}
        perPage={PER_PAGE}
        onPage={(next) => void navigate({ to: '/workflows', search: { page: next } })}
        label="Workflow list"
        columns={WORKFLOW_COLUMNS}
        rowKey={(workflow) => workflow.id}
        empty={
          <Empty title="No workflows yet">
            <p>A workflow is a graph of steps — conditions, agents, HTTP calls, approvals, waits — run on demand, by an inbound webhook or on a schedule.</p>
          </Empty>
        }
      />
    </Page>
  );
}

const WORKFLOW_COLUMNS: Column<WorkflowSummary>[] = [
  {
    header: 'Name',
    cell: (workflow) => (
      <Link to="/workflows/$workflowId" params={{ workflowId: workflow.id }}>
        {workflow.name}
      </Link>
    ),
  },
  { header: 'Status', cell: (workflow) => <span className={`badge badge-${workflow.status}`}>{workflow.status}</span> },
  { header: 'Trigger', cell: (workflow) => workflow.trigger_type },
  { header: 'Version', cell: (workflow) => workflow.version },
  { header: 'Last run', cell: (workflow) => (workflow.last_run_at ? <Time value={workflow.last_run_at} /> : <span className="muted">never</span>) },
  { header: 'Updated', cell: (workflow) => <Time value={workflow.updated_at} /> },
];

type NewWorkflow = RequestBody<'/api/v1/workflows', 'post'>;

function CreateWorkflow({ onDone }: { onDone: () => void }) {
  const client = useClient();
  const invalidate = useInvalidate();
  const navigate = useNavigate();
  const [graphText, setGraphText] = useState(() => JSON.stringify(EXAMPLE_GRAPH, null, 2));
  const mutation = useMutation({
    mutationFn: ({ name, description }: { name: string; description: string }) => {
      // The graph is sent as written: the API checks it and names each problem by its path.
      const { nodes, edges } = checkedValue(parseJsonObject(graphText, 'graph')) as Pick<NewWorkflow, 'nodes' | 'edges'>;
      return call(client.POST('/api/v1/workflows', { body: { name, ...(description ? { description } : {}), ...(nodes === undefined ? {} : { nodes }), ...(edges === undefined ? {} : { edges }) } }));
    },
    onSuccess: async (workflow) => {
      await invalidate('workflows');
      onDone();
      await navigate({ to: '/workflows/$workflowId', params: { workflowId: workflow.id } });
    },
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const { name = '', description = '' } = formValues(event.currentTarget);
    mutation.mutate({ name, description });
  };
  return (
    <form className="card" onSubmit={submit} aria-labelledby="new-workflow-title" noValidate>
      <h2 id="new-workflow-title">New workflow</h2>
      <ErrorNotice error={mutation.error} title="Could not create the workflow" />
      <NameAndDescription error={mutation.error} />
      <DefinitionEditor
        label="Graph (JSON: nodes and edges)"
        field="graph"
        hint={GRAPH_HINT}
        text={graphText}
        onText={setGraphText}
        error={mutation.error}
        covers={(field) => /^(nodes|edges)\b/.test(field)}
      />
      <FormActions submitLabel="Create workflow" pendingLabel="Creating…" pending={mutation.isPending} onCancel={onDone} />
    </form>
  );
}
