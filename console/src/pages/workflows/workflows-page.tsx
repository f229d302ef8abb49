import './workflows.css';
import type { RequestBody } from '@agent-platform/client';
import { useMutation } from '@tanstack/react-query';
import { getRouteApi, Link, useNavigate } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { call } from '../../api/call.js';
import { useClient, useInvalidate, useTenantQuery } from '../../api/session-context.js';
import { Empty, ErrorNotice, QueryState } from '../../ui/feedback.js';
import { Field, formValues } from '../../ui/form.js';
import { Page, Pager, Time } from '../../ui/page.js';
import { DefinitionEditor } from './definition-editor.js';
import { EXAMPLE_GRAPH, GRAPH_HINT } from './graph-help.js';
import { parseJsonObject } from './json-field.js';

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
      <QueryState query={workflows} loadingLabel="Loading workflows…">
        {(list) =>
          list.items.length === 0 ? (
            <Empty title="No workflows yet">
              <p>A workflow is a graph of steps — conditions, agents, HTTP calls, approvals, waits — run on demand, by an inbound webhook or on a schedule.</p>
            </Empty>
          ) : (
            <>
              <div className="table-scroll">
                <table>
                  <thead>
                    <tr>
                      <th scope="col">Name</th>
                      <th scope="col">Status</th>
                      <th scope="col">Trigger</th>
                      <th scope="col">Version</th>
                      <th scope="col">Last run</th>
                      <th scope="col">Updated</th>
                    </tr>
                  </thead>
                  <tbody>
                    {list.items.map((workflow) => (
                      <tr key={workflow.id}>
                        <td>
                          <Link to="/workflows/$workflowId" params={{ workflowId: workflow.id }}>
                            {workflow.name}
                          </Link>
                        </td>
                        <td>
                          <span className={`badge badge-${workflow.status}`}>{workflow.status}</span>
                        </td>
                        <td>{workflow.trigger_type}</td>
                        <td>{workflow.version}</td>
                        <td>{workflow.last_run_at ? <Time value={workflow.last_run_at} /> : <span className="muted">never</span>}</td>
                        <td>
                          <Time value={workflow.updated_at} />
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              <Pager page={page} perPage={PER_PAGE} total={list.total} onPage={(next) => void navigate({ to: '/workflows', search: { page: next } })} />
            </>
          )
        }
      </QueryState>
    </Page>
  );
}

type NewWorkflow = RequestBody<'/api/v1/workflows', 'post'>;

function CreateWorkflow({ onDone }: { onDone: () => void }) {
  const client = useClient();
  const invalidate = useInvalidate();
  const navigate = useNavigate();
  const [graphText, setGraphText] = useState(() => JSON.stringify(EXAMPLE_GRAPH, null, 2));
  const [graphProblem, setGraphProblem] = useState<string | undefined>();
  const mutation = useMutation({
    mutationFn: (workflow: NewWorkflow) => call(client.POST('/api/v1/workflows', { body: workflow })),
    onSuccess: async (workflow) => {
      await invalidate('workflows');
      onDone();
      await navigate({ to: '/workflows/$workflowId', params: { workflowId: workflow.id } });
    },
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const { name = '', description = '' } = formValues(event.currentTarget);
    const parsed = parseJsonObject(graphText);
    setGraphProblem(parsed.problem);
    if (!parsed.value) return;
    // The graph is sent as written: the API checks it and names each problem by its path.
    const { nodes, edges } = parsed.value as Pick<NewWorkflow, 'nodes' | 'edges'>;
    mutation.mutate({ name, ...(description ? { description } : {}), ...(nodes === undefined ? {} : { nodes }), ...(edges === undefined ? {} : { edges }) });
  };
  return (
    <form className="card" onSubmit={submit} aria-labelledby="new-workflow-title" noValidate>
      <h2 id="new-workflow-title">New workflow</h2>
      <ErrorNotice error={mutation.error} title="Could not create the workflow" />
      <Field label="Name" field="name" error={mutation.error}>
        <input name="name" required autoFocus />
      </Field>
      <Field label="Description" field="description" error={mutation.error}>
        <textarea name="description" rows={2} />
      </Field>
      <DefinitionEditor
        label="Graph (JSON: nodes and edges)"
        hint={GRAPH_HINT}
        text={graphText}
        onText={setGraphText}
        localProblem={graphProblem}
        apiError={mutation.error}
        covers={(field) => /^(nodes|edges)\b/.test(field)}
      />
      <div className="form-actions">
        <button type="submit" disabled={mutation.isPending}>
          {mutation.isPending ? 'Creating…' : 'Create workflow'}
        </button>
        <button type="button" className="secondary" onClick={onDone}>
          Cancel
        </button>
      </div>
    </form>
  );
}
