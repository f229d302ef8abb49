import './workflows.css';
import type { RequestBody, Workflow } from '@agent-platform/client';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { getRouteApi, Link, useNavigate } from '@tanstack/react-router';
import { useMemo, useState, type FormEvent } from 'react';
import { call } from '../../api/call.js';
import { checkedValue, parseJsonObject } from '../../api/local-errors.js';
import { useClient, useInvalidate, useSession, useTenantQuery } from '../../api/session-context.js';
import { ErrorNotice, QueryState } from '../../ui/feedback.js';
import { ConfirmButton } from '../../ui/confirm-button.js';
import { FormActions } from '../../ui/form-actions.js';
import { JsonField } from '../../ui/json-field.js';
import { EXACT_SEARCH } from '../../ui/links.js';
import { Page, Time } from '../../ui/page.js';
import { DefinitionEditor } from './definition-editor.js';
import { drawnGraph } from './graph-model.js';
import { GraphView } from './graph-view.js';
import { VersionsTab } from './versions-tab.js';
import { GRAPH_HINT } from './graph-help.js';

const route = getRouteApi('/app/workflows/$workflowId');

export function WorkflowPage() {
  const { workflowId } = route.useParams();
  const { tab } = route.useSearch();
  const [running, setRunning] = useState(false);
  const workflow = useTenantQuery(['workflows', workflowId], (client) => call(client.GET('/api/v1/workflows/{workflow_id}', { params: { path: { workflow_id: workflowId } } })));
  const transition = useStatusChange(workflowId);
  const remove = useDeleteWorkflow(workflowId);
  return (
    <Page title={workflow.data?.name ?? 'Workflow'} actions={workflow.data ? <WorkflowActions workflow={workflow.data} running={running} onRunning={setRunning} transition={transition} remove={remove} /> : null}>
      <p className="breadcrumbs">
        <Link to="/workflows">Workflows</Link>
      </p>
      <QueryState query={workflow} loadingLabel="Loading the workflow…">
        {(found) => (
          <>
            <ErrorNotice error={transition.error} title={transition.variables === 'pause' ? 'Could not pause the workflow' : 'Could not resume the workflow'} />
            <ErrorNotice error={remove.error} title="Could not delete the workflow" />
            {running ? <RunWorkflow workflow={found} onClose={() => setRunning(false)} /> : null}
            <WorkflowFacts workflow={found} />
            <nav className="tabs" aria-label="Workflow">
              <Link to="/workflows/$workflowId" params={{ workflowId }} search={{}} activeOptions={EXACT_SEARCH}>
                Graph
              </Link>
              <Link to="/workflows/$workflowId" params={{ workflowId }} search={{ tab: 'edit' }} activeOptions={EXACT_SEARCH}>
                Edit as JSON
              </Link>
              <Link to="/workflows/$workflowId" params={{ workflowId }} search={{ tab: 'versions' }} activeOptions={{ includeSearch: true }}>
                Versions
              </Link>
              <Link to="/workflows/$workflowId/executions" params={{ workflowId }} search={{}}>
                Executions
              </Link>
            </nav>
            {tab === 'edit' ? <EditDefinition workflow={found} /> : tab === 'versions' ? <VersionsTab workflow={found} /> : <GraphTab workflow={found} />}
          </>
        )}
      </QueryState>
    </Page>
  );
}

function WorkflowFacts({ workflow }: { workflow: Workflow }) {
  return (
    <dl className="facts">
      <dt>Status</dt>
      <dd>
        <span className={`badge badge-${workflow.status}`}>{workflow.status}</span>
      </dd>
      <dt>Trigger</dt>
      <dd>{workflow.trigger_type}</dd>
      {workflow.trigger_type === 'webhook' ? (
        <>
          <dt>Webhook URL</dt>
          <dd>
            <code className="wf-webhook-url">{workflow.webhook_url}</code>
            {workflow.status === 'active' ? null : <span className="muted"> (answers only while the workflow is active)</span>}
          </dd>
        </>
      ) : null}
      <dt>Version</dt>
      <dd>{workflow.version}</dd>
      {workflow.description ? (
        <>
          <dt>Description</dt>
          <dd>{workflow.description}</dd>
        </>
      ) : null}
      <dt>Runs</dt>
      <dd>
        {workflow.statistics.total_runs} · {Math.round(workflow.statistics.success_rate * 100)}% succeeded · {workflow.statistics.avg_duration} on average
      </dd>
      <dt>Last run</dt>
      <dd>{workflow.last_run_at ? <Time value={workflow.last_run_at} /> : <span className="muted">never</span>}</dd>
      <dt>Updated</dt>
      <dd>
        <Time value={workflow.updated_at} />
      </dd>
    </dl>
  );
}

/** decisions §7: pause takes draft and active, resume takes draft and paused; both idempotent. */
function useStatusChange(workflowId: string) {
  const client = useClient();
  const invalidate = useInvalidate();
  const path = { params: { path: { workflow_id: workflowId } } };
  return useMutation({
    mutationFn: (to: 'pause' | 'resume') => call(to === 'pause' ? client.POST('/api/v1/workflows/{workflow_id}/pause', path) : client.POST('/api/v1/workflows/{workflow_id}/resume', path)),
    onSuccess: () => invalidate('workflows'),
  });
}

/** Run, pause or resume, delete: the page's actions; run opens an inline card on the page, delete asks first. */
function WorkflowActions({
  workflow,
  running,
  onRunning,
  transition,
  remove,
}: {
  workflow: Workflow;
  running: boolean;
  onRunning: (running: boolean) => void;
  transition: ReturnType<typeof useStatusChange>;
  remove: ReturnType<typeof useDeleteWorkflow>;
}) {
  return (
    <>
      <button type="button" onClick={() => onRunning(!running)} aria-expanded={running}>
        Run
      </button>
      {workflow.status === 'paused' ? null : (
        <button type="button" className="secondary" disabled={transition.isPending} onClick={() => transition.mutate('pause')}>
          Pause
        </button>
      )}
      {workflow.status === 'active' ? null : (
        <button type="button" className="secondary" disabled={transition.isPending} onClick={() => transition.mutate('resume')}>
          {workflow.status === 'draft' ? 'Activate' : 'Resume'}
        </button>
      )}
      <ConfirmButton
        label="Delete"
        question={`Delete ${workflow.name}? The workflow, its versions and its executions are deleted for good.`}
        confirmLabel="Delete for good"
        cancelLabel="Keep it"
        pending={remove.isPending}
        pendingLabel="Deleting…"
        onConfirm={() => remove.mutate()}
      />
    </>
  );
}

function RunWorkflow({ workflow, onClose }: { workflow: Workflow; onClose: () => void }) {
  const client = useClient();
  const invalidate = useInvalidate();
  const navigate = useNavigate();
  const [inputText, setInputText] = useState('{}');
  const mutation = useMutation({
    mutationFn: (text: string) => {
      const input = checkedValue(parseJsonObject(text, 'input'));
      return call(client.POST('/api/v1/workflows/{workflow_id}/execute', { params: { path: { workflow_id: workflow.id } }, body: { input, async: true } }));
    },
    onSuccess: async (accepted) => {
      await invalidate('workflows');
      await navigate({ to: '/workflows/$workflowId/executions/$executionId', params: { workflowId: workflow.id, executionId: accepted.execution_id } });
    },
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    mutation.mutate(inputText);
  };
  return (
    <form className="card" onSubmit={submit} aria-labelledby="run-title" noValidate>
      <h2 id="run-title">Run {workflow.name}</h2>
      <ErrorNotice error={mutation.error} title="Could not start a run" />
      <JsonField
        label="Input (JSON)"
        field="input"
        error={mutation.error}
        className="code json-input"
        rows={6}
        value={inputText}
        onChange={(event) => setInputText(event.target.value)}
        hint={
          <>
            The trigger payload: expressions and templates read it as <code>input</code>.
          </>
        }
      />
      <FormActions submitLabel="Start run" pendingLabel="Starting…" pending={mutation.isPending} onCancel={onClose} />
    </form>
  );
}

/** Deletes the workflow, then goes back to the list. */
function useDeleteWorkflow(workflowId: string) {
  const client = useClient();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const { state } = useSession();
  return useMutation({
    mutationFn: () => call(client.DELETE('/api/v1/workflows/{workflow_id}', { params: { path: { workflow_id: workflowId } } })),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: [state.tenantId, 'workflows', 'list'] });
      await navigate({ to: '/workflows' });
      // The workflow's own queries would answer 404 now: drop them rather than refetch them.
      queryClient.removeQueries({ queryKey: [state.tenantId, 'workflows', workflowId] });
    },
  });
}

function GraphTab({ workflow }: { workflow: Workflow }) {
  const graph = useMemo(() => drawnGraph(workflow.nodes, workflow.edges), [workflow.nodes, workflow.edges]);
  return (
    <section aria-labelledby="graph-title">
      <h2 id="graph-title">Graph · version {workflow.version}</h2>
      <GraphView graph={graph} label={`Graph of ${workflow.name}, version ${workflow.version}`} />
    </section>
  );
}

type WorkflowDefinition = RequestBody<'/api/v1/workflows/{workflow_id}', 'put'>;

function definitionText(workflow: Workflow): string {
  return JSON.stringify({ name: workflow.name, description: workflow.description ?? '', nodes: workflow.nodes, edges: workflow.edges }, null, 2);
}

function EditDefinition({ workflow }: { workflow: Workflow }) {
  const client = useClient();
  const invalidate = useInvalidate();
  const [text, setText] = useState(() => definitionText(workflow));
  const mutation = useMutation({
    mutationFn: (written: string) => {
      // Sent as written: the API checks the definition and names each problem by its path.
      const definition = checkedValue(parseJsonObject(written, 'definition')) as WorkflowDefinition;
      return call(client.PUT('/api/v1/workflows/{workflow_id}', { params: { path: { workflow_id: workflow.id } }, body: definition }));
    },
    onSuccess: () => invalidate('workflows'),
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    mutation.mutate(text);
  };
  const saved = mutation.isSuccess ? mutation.data : undefined;
  return (
    <form onSubmit={submit} aria-labelledby="edit-title" noValidate>
      <h2 id="edit-title">Edit as JSON</h2>
      <p className="muted">The whole definition: name, description, nodes and edges. A change of nodes or edges is saved as a new version.</p>
      <ErrorNotice error={mutation.error} title="Could not save the workflow" />
      {saved ? (
        <p className="notice notice-info" role="status">
          Saved: {saved.name} is at version {saved.version}.
        </p>
      ) : null}
      <DefinitionEditor label="Definition (JSON)" field="definition" hint={GRAPH_HINT} text={text} onText={setText} error={mutation.error} />
      <FormActions
        submitLabel="Save"
        pendingLabel="Saving…"
        pending={mutation.isPending}
        cancelLabel="Discard changes"
        onCancel={() => {
          setText(definitionText(workflow));
          mutation.reset();
        }}
      />
    </form>
  );
}
