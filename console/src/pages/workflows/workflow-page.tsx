import './workflows.css';
import type { RequestBody, Workflow } from '@agent-platform/client';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { getRouteApi, Link, useNavigate } from '@tanstack/react-router';
import { useMemo, useState, type FormEvent } from 'react';
import { call } from '../../api/call.js';
import { useClient, useInvalidate, useSession, useTenantQuery } from '../../api/session-context.js';
import { ErrorNotice, QueryState } from '../../ui/feedback.js';
import { Page, Time } from '../../ui/page.js';
import { DefinitionEditor } from './definition-editor.js';
import { drawnGraph } from './graph-model.js';
import { GraphView } from './graph-view.js';
import { JsonField, parseJsonObject } from './json-field.js';
import { VersionsTab } from './versions-tab.js';
import { GRAPH_HINT } from './graph-help.js';

const route = getRouteApi('/app/workflows/$workflowId');
/** The tab is a search parameter: a tab link is current only when the search is exactly its own. */
const EXACTLY = { exact: true, includeSearch: true };

export function WorkflowPage() {
  const { workflowId } = route.useParams();
  const { tab } = route.useSearch();
  const [panel, setPanel] = useState<Panel>();
  const workflow = useTenantQuery(['workflows', workflowId], (client) => call(client.GET('/api/v1/workflows/{workflow_id}', { params: { path: { workflow_id: workflowId } } })));
  const transition = useStatusChange(workflowId);
  return (
    <Page title={workflow.data?.name ?? 'Workflow'} actions={workflow.data ? <WorkflowActions workflow={workflow.data} panel={panel} onPanel={setPanel} transition={transition} /> : null}>
      <p className="breadcrumbs">
        <Link to="/workflows">Workflows</Link>
      </p>
      <QueryState query={workflow} loadingLabel="Loading the workflow…">
        {(found) => (
          <>
            <ErrorNotice error={transition.error} title={transition.variables === 'pause' ? 'Could not pause the workflow' : 'Could not resume the workflow'} />
            {panel === 'run' ? <RunWorkflow workflow={found} onClose={() => setPanel(undefined)} /> : null}
            {panel === 'delete' ? <DeleteWorkflow workflow={found} onClose={() => setPanel(undefined)} /> : null}
            <WorkflowFacts workflow={found} />
            <nav className="tabs" aria-label="Workflow">
              <Link to="/workflows/$workflowId" params={{ workflowId }} search={{}} activeOptions={EXACTLY}>
                Graph
              </Link>
              <Link to="/workflows/$workflowId" params={{ workflowId }} search={{ tab: 'edit' }} activeOptions={EXACTLY}>
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

type Panel = 'run' | 'delete' | undefined;

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

/** Run, pause or resume, delete: the page's actions; run and delete open inline cards on the page. */
function WorkflowActions({ workflow, panel, onPanel, transition }: { workflow: Workflow; panel: Panel; onPanel: (panel: Panel) => void; transition: ReturnType<typeof useStatusChange> }) {
  return (
    <>
      <button type="button" onClick={() => onPanel(panel === 'run' ? undefined : 'run')} aria-expanded={panel === 'run'}>
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
      <button type="button" className="danger" onClick={() => onPanel(panel === 'delete' ? undefined : 'delete')} aria-expanded={panel === 'delete'}>
        Delete
      </button>
    </>
  );
}

function RunWorkflow({ workflow, onClose }: { workflow: Workflow; onClose: () => void }) {
  const client = useClient();
  const invalidate = useInvalidate();
  const navigate = useNavigate();
  const [inputText, setInputText] = useState('{}');
  const [inputProblem, setInputProblem] = useState<string | undefined>();
  const mutation = useMutation({
    mutationFn: (input: Record<string, unknown>) => call(client.POST('/api/v1/workflows/{workflow_id}/execute', { params: { path: { workflow_id: workflow.id } }, body: { input, async: true } })),
    onSuccess: async (accepted) => {
      await invalidate('workflows');
      await navigate({ to: '/workflows/$workflowId/executions/$executionId', params: { workflowId: workflow.id, executionId: accepted.execution_id } });
    },
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const parsed = parseJsonObject(inputText);
    setInputProblem(parsed.problem);
    if (parsed.value) mutation.mutate(parsed.value);
  };
  return (
    <form className="card" onSubmit={submit} aria-labelledby="run-title" noValidate>
      <h2 id="run-title">Run {workflow.name}</h2>
      <ErrorNotice error={mutation.error} title="Could not start a run" />
      <JsonField label="Input (JSON)" name="input" rows={6} value={inputText} onChange={setInputText} problem={inputProblem} hint={<>The trigger payload: expressions and templates read it as <code>input</code>.</>} />
      <div className="form-actions">
        <button type="submit" disabled={mutation.isPending}>
          {mutation.isPending ? 'Starting…' : 'Start run'}
        </button>
        <button type="button" className="secondary" onClick={onClose}>
          Cancel
        </button>
      </div>
    </form>
  );
}

function DeleteWorkflow({ workflow, onClose }: { workflow: Workflow; onClose: () => void }) {
  const client = useClient();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const { state } = useSession();
  const mutation = useMutation({
    mutationFn: () => call(client.DELETE('/api/v1/workflows/{workflow_id}', { params: { path: { workflow_id: workflow.id } } })),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: [state.tenantId, 'workflows', 'list'] });
      await navigate({ to: '/workflows' });
      // The workflow's own queries would answer 404 now: drop them rather than refetch them.
      queryClient.removeQueries({ queryKey: [state.tenantId, 'workflows', workflow.id] });
    },
  });
  return (
    <div className="card wf-confirm" role="group" aria-labelledby="delete-title">
      <h2 id="delete-title">Delete {workflow.name}?</h2>
      <p>The workflow, its versions and its executions are deleted for good.</p>
      <ErrorNotice error={mutation.error} title="Could not delete the workflow" />
      <div className="form-actions">
        <button type="button" className="danger" disabled={mutation.isPending} onClick={() => mutation.mutate()}>
          {mutation.isPending ? 'Deleting…' : 'Delete for good'}
        </button>
        <button type="button" className="secondary" onClick={onClose} autoFocus>
          Keep it
        </button>
      </div>
    </div>
  );
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
  const [localProblem, setLocalProblem] = useState<string | undefined>();
  const mutation = useMutation({
    mutationFn: (definition: WorkflowDefinition) => call(client.PUT('/api/v1/workflows/{workflow_id}', { params: { path: { workflow_id: workflow.id } }, body: definition })),
    onSuccess: () => invalidate('workflows'),
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const parsed = parseJsonObject(text);
    setLocalProblem(parsed.problem);
    // Sent as written: the API checks the definition and names each problem by its path.
    if (parsed.value) mutation.mutate(parsed.value);
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
      <DefinitionEditor label="Definition (JSON)" hint={GRAPH_HINT} text={text} onText={setText} localProblem={localProblem} apiError={mutation.error} />
      <div className="form-actions">
        <button type="submit" disabled={mutation.isPending}>
          {mutation.isPending ? 'Saving…' : 'Save'}
        </button>
        <button
          type="button"
          className="secondary"
          onClick={() => {
            setText(definitionText(workflow));
            setLocalProblem(undefined);
            mutation.reset();
          }}
        >
          Discard changes
        </button>
      </div>
    </form>
  );
}
