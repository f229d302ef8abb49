import './workflows.css';
import type { Execution, NodeExecution, WorkflowEdge, WorkflowNode } from '@agent-platform/client';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { getRouteApi, Link, useNavigate } from '@tanstack/react-router';
import { useId, useMemo, useState } from 'react';
import { call } from '../../api/call.js';
import { LIVE_INTERVAL_MS } from '../../api/live.js';
import { useClient, useSession, useTenantQuery } from '../../api/session-context.js';
import { ErrorNotice, QueryState } from '../../ui/feedback.js';
import { ConfirmButton } from '../../ui/confirm-button.js';
import { Field } from '../../ui/form.js';
import { JsonView } from '../../ui/json-view.js';
import { Page, Time } from '../../ui/page.js';
import { formatDuration } from '../../ui/format.js';
import { FINAL_EXECUTION_STATUSES } from './format.js';
import { drawnGraph } from './graph-model.js';
import { GraphView } from './graph-view.js';

const route = getRouteApi('/app/workflows/$workflowId/executions/$executionId');

const isLive = (status: string | undefined) => status !== undefined && !FINAL_EXECUTION_STATUSES.includes(status);

/** After an execution changed here: it is set from the answer, and what lists it is marked stale. */
function useExecutionChanged(workflowId: string) {
  const queryClient = useQueryClient();
  const { state } = useSession();
  return async (execution?: Execution) => {
    if (execution) queryClient.setQueryData([state.tenantId, 'workflows', workflowId, 'executions', execution.id], execution);
    await Promise.all([
      queryClient.invalidateQueries({ queryKey: [state.tenantId, 'workflows', workflowId, 'executions', 'list'] }),
      queryClient.invalidateQueries({ queryKey: [state.tenantId, 'workflows', workflowId], exact: true }),
      queryClient.invalidateQueries({ queryKey: [state.tenantId, 'workflows', 'list'] }),
    ]);
  };
}

export function ExecutionPage() {
  const { workflowId, executionId } = route.useParams();
  const workflow = useTenantQuery(['workflows', workflowId], (client) => call(client.GET('/api/v1/workflows/{workflow_id}', { params: { path: { workflow_id: workflowId } } })));
  // Live while it runs or waits: read every 2 s, and no more once its status is final.
  const execution = useTenantQuery(
    ['workflows', workflowId, 'executions', executionId],
    (client) => call(client.GET('/api/v1/workflows/{workflow_id}/executions/{execution_id}', { params: { path: { workflow_id: workflowId, execution_id: executionId } } })),
    { refetchInterval: (query) => (isLive(query.state.data?.status) ? LIVE_INTERVAL_MS : false) },
  );
  const version = execution.data?.workflow_version;
  // The graph the execution runs (its version, whatever was saved since): node types, configs, edges.
  const graphVersion = useTenantQuery(
    ['workflows', workflowId, 'versions', version ?? 0],
    (client) => call(client.GET('/api/v1/workflows/{workflow_id}/versions/{version}', { params: { path: { workflow_id: workflowId, version: version ?? 0 } } })),
    { staleTime: Infinity, enabled: version !== undefined },
  );
  const nodesById = useMemo(() => new Map((graphVersion.data?.nodes ?? []).map((node) => [node.id, node])), [graphVersion.data]);
  const received = useMemo(() => (execution.data && graphVersion.data ? inputsOf(execution.data, graphVersion.data.edges) : new Map<string, unknown>()), [execution.data, graphVersion.data]);
  return (
    <Page title={workflow.data ? `Execution of ${workflow.data.name}` : 'Execution'} actions={execution.data ? <ExecutionActions execution={execution.data} /> : null}>
      <p className="breadcrumbs">
        <Link to="/workflows">Workflows</Link> › <Link to="/workflows/$workflowId" params={{ workflowId }} search={{}}>
          {workflow.data?.name ?? 'Workflow'}
        </Link>{' '}
        › <Link to="/workflows/$workflowId/executions" params={{ workflowId }} search={{}}>
          Executions
        </Link>
      </p>
      <QueryState query={execution} loadingLabel="Loading the execution…">
        {(found) => (
          <>
            <ExecutionFacts execution={found} />
            <section aria-labelledby="timeline-title">
              <h2 id="timeline-title">Timeline</h2>
              <ol className="wf-timeline">
                {found.node_executions.map((nodeExecution) => (
                  <TimelineItem key={nodeExecution.node_id} execution={found} nodeExecution={nodeExecution} node={nodesById.get(nodeExecution.node_id)} input={received.get(nodeExecution.node_id)} />
                ))}
              </ol>
            </section>
            {graphVersion.data ? <ExecutionGraph execution={found} nodes={graphVersion.data.nodes} edges={graphVersion.data.edges} /> : null}
          </>
        )}
      </QueryState>
    </Page>
  );
}

function ExecutionFacts({ execution }: { execution: Execution }) {
  const live = isLive(execution.status);
  return (
    <>
      <dl className="facts">
        <dt>Status</dt>
        <dd>
          <span className={`badge badge-${execution.status}`} data-testid="execution-status">
            {execution.status}
          </span>
          {live ? <span className="muted"> · live, read again every 2 s</span> : null}
        </dd>
        <dt>Execution</dt>
        <dd>
          <code>{execution.id}</code>
        </dd>
        <dt>Trigger</dt>
        <dd>{execution.trigger}</dd>
        <dt>Version</dt>
        <dd>{execution.workflow_version}</dd>
        <dt>Started</dt>
        <dd>
          <Time value={execution.started_at} />
        </dd>
        <dt>Completed</dt>
        <dd>
          <Time value={execution.completed_at} />
        </dd>
        <dt>Duration</dt>
        <dd>{formatDuration(execution.duration_ms)}</dd>
      </dl>
      {execution.error ? (
        <div className="notice notice-error">
          <strong>The execution failed{execution.error.node_id ? ` at ${execution.error.node_id}` : ''}</strong>
          <p>{execution.error.message}</p>
        </div>
      ) : null}
      <div className="wf-json-pair">
        <JsonView label="Input" value={execution.input} />
        <JsonView label="Output" value={execution.output} />
      </div>
    </>
  );
}

/** Cancel while it runs or waits; retry once it failed (a new execution, then its page). */
function ExecutionActions({ execution }: { execution: Execution }) {
  const client = useClient();
  const navigate = useNavigate();
  const changed = useExecutionChanged(execution.workflow_id);
  const path = { params: { path: { workflow_id: execution.workflow_id, execution_id: execution.id } } };
  const cancel = useMutation({
    mutationFn: () => call(client.POST('/api/v1/workflows/{workflow_id}/executions/{execution_id}/cancel', path)),
    onSuccess: (cancelled) => changed(cancelled),
  });
  const retry = useMutation({
    mutationFn: () => call(client.POST('/api/v1/workflows/{workflow_id}/executions/{execution_id}/retry', path)),
    onSuccess: async (accepted) => {
      await changed();
      await navigate({ to: '/workflows/$workflowId/executions/$executionId', params: { workflowId: execution.workflow_id, executionId: accepted.execution_id } });
    },
  });
  return (
    <>
      {isLive(execution.status) ? (
        <ConfirmButton
          label="Cancel"
          question="Cancel this execution? Its remaining steps do not run."
          confirmLabel="Cancel the execution"
          cancelLabel="Keep it running"
          pending={cancel.isPending}
          pendingLabel="Cancelling…"
          onConfirm={() => cancel.mutate()}
        />
      ) : null}
      {execution.status === 'failed' ? (
        <button type="button" disabled={retry.isPending} onClick={() => retry.mutate()}>
          {retry.isPending ? 'Retrying…' : 'Retry'}
        </button>
      ) : null}
      <div className="wf-action-panels">
        <ErrorNotice error={cancel.error} title="Could not cancel the execution" />
        <ErrorNotice error={retry.error} title="Could not retry the execution" />
      </div>
    </>
  );
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * What each node was handed: a node nothing leads to (the trigger) gets the execution's input;
 * any other, the outputs of the nodes with an edge into it that produced one, by node id.
 */
function inputsOf(execution: Execution, edges: readonly WorkflowEdge[]): Map<string, unknown> {
  const outputs = new Map(execution.node_executions.filter((node) => node.output !== undefined && node.output !== null).map((node) => [node.node_id, node.output]));
  const inputs = new Map<string, unknown>();
  for (const { node_id: nodeId } of execution.node_executions) {
    const sources = edges.filter((edge) => edge.target === nodeId).map((edge) => edge.source);
    if (sources.length === 0) inputs.set(nodeId, execution.input);
    else {
      const given = sources.filter((source) => outputs.has(source)).map((source) => [source, outputs.get(source)] as const);
      if (given.length > 0) inputs.set(nodeId, Object.fromEntries(given));
    }
  }
  return inputs;
}

function TimelineItem({ execution, nodeExecution, node, input }: { execution: Execution; nodeExecution: NodeExecution; node: WorkflowNode | undefined; input: unknown }) {
  const titleId = useId();
  const waitingOutput = nodeExecution.status === 'waiting' && isRecord(nodeExecution.output) ? nodeExecution.output : undefined;
  const isApproval = node?.type === 'approval' || (waitingOutput !== undefined && 'expires_at' in waitingOutput);
  return (
    <li className={`wf-timeline-item wf-timeline-${nodeExecution.status}`} aria-labelledby={titleId}>
      <h3 id={titleId} className="wf-timeline-title">
        <span className={`badge badge-${nodeExecution.status}`}>{nodeExecution.status}</span> <code>{nodeExecution.node_id}</code>
        {node ? <span className="muted"> · {node.type}</span> : null}
      </h3>
      <dl className="facts wf-timeline-facts">
        <dt>Attempts</dt>
        <dd>{nodeExecution.attempts}</dd>
        <dt>Started</dt>
        <dd>
          <Time value={nodeExecution.started_at} />
        </dd>
        <dt>Duration</dt>
        <dd>{formatDuration(nodeExecution.duration_ms)}</dd>
      </dl>
      {nodeExecution.error ? (
        <p className="field-error">
          Error: <span>{nodeExecution.error}</span>
        </p>
      ) : null}
      {waitingOutput && isApproval && execution.status === 'waiting' ? <ApprovalDecision execution={execution} nodeId={nodeExecution.node_id} request={waitingOutput} /> : null}
      {waitingOutput && !isApproval && typeof waitingOutput.until === 'string' ? (
        <p>
          Waiting until <Time value={waitingOutput.until} />.
        </p>
      ) : null}
      <div className="wf-json-pair">
        {input === undefined ? null : <JsonView label="Input" value={input} />}
        {node ? <JsonView label="Config" value={node.config} /> : null}
        {nodeExecution.output === undefined ? null : <JsonView label="Output" value={nodeExecution.output} />}
      </div>
    </li>
  );
}

/** decisions §13: an approval node waiting for a person, with its message, approved or rejected here. */
function ApprovalDecision({ execution, nodeId, request }: { execution: Execution; nodeId: string; request: Record<string, unknown> }) {
  const client = useClient();
  const changed = useExecutionChanged(execution.workflow_id);
  const [comment, setComment] = useState('');
  const decide = useMutation({
    mutationFn: (decision: 'approve' | 'reject') => {
      const options = { params: { path: { workflow_id: execution.workflow_id, execution_id: execution.id, node_id: nodeId } }, body: comment.trim() ? { comment: comment.trim() } : {} };
      return call(decision === 'approve' ? client.POST('/api/v1/workflows/{workflow_id}/executions/{execution_id}/nodes/{node_id}/approve', options) : client.POST('/api/v1/workflows/{workflow_id}/executions/{execution_id}/nodes/{node_id}/reject', options));
    },
    onSuccess: (decided) => changed(decided),
  });
  const message = typeof request.message === 'string' && request.message !== '' ? request.message : 'This step waits for an approval.';
  return (
    <div className="wf-approval" role="group" aria-label={`Approval of ${nodeId}`}>
      <p className="wf-approval-message">
        <strong>{message}</strong>
      </p>
      {typeof request.expires_at === 'string' ? (
        <p className="muted">
          Undecided, it is rejected at <Time value={request.expires_at} />.
        </p>
      ) : null}
      <ErrorNotice error={decide.error} title="Could not record the decision" />
      <Field label="Comment (optional)" field="comment" error={decide.error}>
        <textarea rows={2} value={comment} onChange={(event) => setComment(event.target.value)} />
      </Field>
      <div className="form-actions">
        <button type="button" disabled={decide.isPending} onClick={() => decide.mutate('approve')}>
          Approve
        </button>
        <button type="button" className="danger" disabled={decide.isPending} onClick={() => decide.mutate('reject')}>
          Reject
        </button>
      </div>
    </div>
  );
}

function ExecutionGraph({ execution, nodes, edges }: { execution: Execution; nodes: WorkflowNode[]; edges: WorkflowEdge[] }) {
  const graph = useMemo(() => drawnGraph(nodes, edges), [nodes, edges]);
  const statuses = useMemo(() => new Map(execution.node_executions.map((node) => [node.node_id, node.status])), [execution.node_executions]);
  return (
    <section aria-labelledby="execution-graph-title">
      <h2 id="execution-graph-title">Graph of version {execution.workflow_version}</h2>
      <GraphView graph={graph} statuses={statuses} label={`Graph of version ${execution.workflow_version} with each node's status`} />
    </section>
  );
}
