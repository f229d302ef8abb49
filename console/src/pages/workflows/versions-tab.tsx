import type { Workflow } from '@agent-platform/client';
import { useMutation } from '@tanstack/react-query';
import { getRouteApi, Link, useNavigate } from '@tanstack/react-router';
import { useMemo } from 'react';
import { call } from '../../api/call.js';
import { useClient, useInvalidate, useTenantQuery } from '../../api/session-context.js';
import { QueryState } from '../../ui/feedback.js';
import { JsonView } from '../../ui/json-view.js';
import { Time } from '../../ui/page.js';
import { VersionsList } from '../../ui/versions-list.js';
import { drawnGraph } from './graph-model.js';
import { GraphView } from './graph-view.js';

const PER_PAGE = 20;
const route = getRouteApi('/app/workflows/$workflowId');

/** decisions §13.1: every graph the workflow has had, one viewable, any restorable as the next version. */
export function VersionsTab({ workflow }: { workflow: Workflow }) {
  const { version: viewed, page = 1 } = route.useSearch();
  const navigate = useNavigate();
  const client = useClient();
  const invalidate = useInvalidate();
  const versions = useTenantQuery(['workflows', workflow.id, 'versions', 'list', page], (api) =>
    call(api.GET('/api/v1/workflows/{workflow_id}/versions', { params: { path: { workflow_id: workflow.id }, query: { page, per_page: PER_PAGE } } })),
  );
  const restore = useMutation({
    mutationFn: (version: number) => call(client.POST('/api/v1/workflows/{workflow_id}/versions/{version}/restore', { params: { path: { workflow_id: workflow.id, version } } })),
    onSuccess: async (restored) => {
      await invalidate('workflows');
      await navigate({ to: '/workflows/$workflowId', params: { workflowId: workflow.id }, search: { tab: 'versions', version: restored.version } });
    },
  });
  return (
    <section aria-labelledby="versions-title">
      <h2 id="versions-title">Versions</h2>
      <p className="muted">Every change of nodes or edges is a new version; executions run to the end on the version they started with. Restoring an old version saves it again as the newest.</p>
      <VersionsList
        query={versions}
        page={page}
        perPage={PER_PAGE}
        onPage={(next) => void navigate({ to: '/workflows/$workflowId', params: { workflowId: workflow.id }, search: { tab: 'versions', page: next } })}
        current={workflow.version}
        viewed={viewed}
        restore={restore}
        viewLink={(version) => (
          <Link to="/workflows/$workflowId" params={{ workflowId: workflow.id }} search={{ tab: 'versions', version, ...(page > 1 ? { page } : {}) }} aria-label={`View version ${version}`}>
            Version {version}
          </Link>
        )}
        restoreAction={(version) => (
          <button type="button" className="secondary" disabled={restore.isPending} onClick={() => restore.mutate(version)} aria-label={`Restore version ${version}`}>
            Restore
          </button>
        )}
      />
      {viewed ? <VersionView workflowId={workflow.id} version={viewed} /> : null}
    </section>
  );
}

function VersionView({ workflowId, version }: { workflowId: string; version: number }) {
  // A version never changes once made: read once, kept.
  const found = useTenantQuery(
    ['workflows', workflowId, 'versions', version],
    (client) => call(client.GET('/api/v1/workflows/{workflow_id}/versions/{version}', { params: { path: { workflow_id: workflowId, version } } })),
    { staleTime: Infinity },
  );
  const graph = useMemo(() => (found.data ? drawnGraph(found.data.nodes, found.data.edges) : undefined), [found.data]);
  return (
    <section className="wf-version" aria-labelledby="version-title">
      <h3 id="version-title">Version {version}</h3>
      <QueryState query={found} loadingLabel={`Loading version ${version}…`}>
        {(item) => (
          <>
            <p className="muted">
              Made <Time value={item.created_at} /> by <code>{item.created_by}</code>.
            </p>
            {graph ? <GraphView graph={graph} label={`Graph of version ${version}`} /> : null}
            <JsonView label={`Nodes and edges of version ${version}`} value={{ nodes: item.nodes, edges: item.edges }} />
          </>
        )}
      </QueryState>
    </section>
  );
}
