import { getRouteApi } from '@tanstack/react-router';
import { call } from '../../api/call.js';
import { useTenantQuery } from '../../api/session-context.js';
import { QueryState } from '../../ui/feedback.js';
import { Page, Time } from '../../ui/page.js';

const route = getRouteApi('/app/agents/$agentId');

export function AgentPage() {
  const { agentId } = route.useParams();
  const agent = useTenantQuery(['agents', agentId], (client) => call(client.GET('/api/v1/agents/{agent_id}', { params: { path: { agent_id: agentId } } })));
  return (
    <Page title={agent.data?.name ?? 'Agent'}>
      <QueryState query={agent} loadingLabel="Loading the agent…">
        {(found) => (
          <dl className="facts">
            <dt>Type</dt>
            <dd>{found.type}</dd>
            <dt>Memory</dt>
            <dd>{found.memory_types.join(', ')}</dd>
            <dt>Model</dt>
            <dd>{found.config.model ?? "The platform's default"}</dd>
            <dt>Created</dt>
            <dd>
              <Time value={found.created_at} />
            </dd>
          </dl>
        )}
      </QueryState>
    </Page>
  );
}
