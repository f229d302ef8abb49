import './workflows.css';
import type { ExecutionSummary } from '@agent-platform/client';
import { getRouteApi, Link, useNavigate } from '@tanstack/react-router';
import { call } from '../../api/call.js';
import { useTenantQuery } from '../../api/session-context.js';
import { DataTable, type Column } from '../../ui/data-table.js';
import { Empty, QueryState } from '../../ui/feedback.js';
import { Options } from '../../ui/options.js';
import { Page, Time } from '../../ui/page.js';
import { formatDuration } from '../../ui/format.js';
import { CursorPager, type CursorPosition } from '../../ui/cursor-pager.js';
import { EXECUTION_STATUSES, type ExecutionStatus } from '@agent-platform/client';

const LIMIT = 20;
const route = getRouteApi('/app/workflows/$workflowId/executions');

function executionColumns(workflowId: string): Column<ExecutionSummary>[] {
  return [
    {
      header: 'Execution',
      cell: (execution) => (
        <Link to="/workflows/$workflowId/executions/$executionId" params={{ workflowId, executionId: execution.id }}>
          <code>{execution.id}</code>
        </Link>
      ),
    },
    { header: 'Status', cell: (execution) => <span className={`badge badge-${execution.status}`}>{execution.status}</span> },
    { header: 'Trigger', cell: (execution) => execution.trigger },
    { header: 'Version', cell: (execution) => execution.workflow_version },
    { header: 'Started', cell: (execution) => <Time value={execution.started_at} /> },
    { header: 'Duration', cell: (execution) => formatDuration(execution.duration_ms) },
    { header: 'Error', cell: (execution) => (execution.error ? `${execution.error.node_id ? `${execution.error.node_id}: ` : ''}${execution.error.message}` : null) },
  ];
}

/**
 * A workflow's executions, newest first, a page at a time by cursor (decisions §5): the cursor of
 * the page shown and those before it live in the URL, so each page is one request however many
 * executions there are, and a page can be linked and reloaded.
 */
export function ExecutionsPage() {
  const { workflowId } = route.useParams();
  const { status, cursor, back = [] } = route.useSearch();
  const navigate = useNavigate();
  const workflow = useTenantQuery(['workflows', workflowId], (client) => call(client.GET('/api/v1/workflows/{workflow_id}', { params: { path: { workflow_id: workflowId } } })));
  const executions = useTenantQuery(['workflows', workflowId, 'executions', 'list', status ?? 'all', cursor ?? ''], (client) =>
    call(
      client.GET('/api/v1/workflows/{workflow_id}/executions', {
        params: { path: { workflow_id: workflowId }, query: { limit: LIMIT, ...(status ? { status } : {}), ...(cursor ? { cursor } : {}) } },
      }),
    ),
  );
  const go = (search: { status?: ExecutionStatus } & CursorPosition) => void navigate({ to: '/workflows/$workflowId/executions', params: { workflowId }, search });
  return (
    <Page
      title={workflow.data ? `Executions of ${workflow.data.name}` : 'Executions'}
      actions={
        <button type="button" className="secondary" onClick={() => void executions.refetch()} disabled={executions.isFetching}>
          {executions.isFetching ? 'Refreshing…' : 'Refresh'}
        </button>
      }
    >
      <p className="breadcrumbs">
        <Link to="/workflows">Workflows</Link> › <Link to="/workflows/$workflowId" params={{ workflowId }} search={{}}>
          {workflow.data?.name ?? 'Workflow'}
        </Link>
      </p>
      <div className="wf-filter">
        <label htmlFor="execution-status">Status</label>
        <select
          id="execution-status"
          value={status ?? ''}
          onChange={(event) => {
            const chosen = EXECUTION_STATUSES.find((known) => known === event.target.value);
            // A new filter starts again from the newest page.
            go(chosen ? { status: chosen } : {});
          }}
        >
          <Options values={EXECUTION_STATUSES} blank="All" />
        </select>
      </div>
      <QueryState query={executions} loadingLabel="Loading executions…">
        {(list) => (
          <>
            <p className="muted" role="status">
              {list.total === 1 ? '1 execution' : `${list.total.toLocaleString()} executions`}
              {status ? ` ${status}` : ''}
            </p>
            <DataTable
              label="Execution list"
              columns={executionColumns(workflowId)}
              rows={list.items}
              rowKey={(execution) => execution.id}
              empty={
                <Empty title={status ? `No ${status} executions` : 'No executions yet'}>
                  <p>{status ? 'Choose another status, or All.' : 'Run the workflow from its page, or let its trigger start it.'}</p>
                </Empty>
              }
            />
            <CursorPager cursor={cursor} back={back} nextCursor={list.next_cursor} onPage={(position) => go({ ...(status ? { status } : {}), ...position })} />
          </>
        )}
      </QueryState>
    </Page>
  );
}
