import { getRouteApi, Link } from '@tanstack/react-router';
import { call } from '../../api/call.js';
import { useTenantQuery } from '../../api/session-context.js';
import { QueryState } from '../../ui/feedback.js';
import { Page } from '../../ui/page.js';
import { AgentSettings } from './agent-settings.js';
import { Playground } from './playground.js';
import './agents.css';

const route = getRouteApi('/app/agents/$agentId');

/** One agent: its settings, and a playground to chat with it (`?tab=playground`). */
export function AgentPage() {
  const { agentId } = route.useParams();
  const { tab } = route.useSearch();
  const agent = useTenantQuery(['agents', agentId], (client) => call(client.GET('/api/v1/agents/{agent_id}', { params: { path: { agent_id: agentId } } })));
  return (
    <Page title={agent.data?.name ?? 'Agent'}>
      {/* The router marks the current tab (class active, aria-current): Settings only without a search. */}
      <nav className="tabs" aria-label="Agent">
        <Link to="/agents/$agentId" params={{ agentId }} search={{}} activeOptions={{ exact: true }}>
          Settings
        </Link>
        <Link to="/agents/$agentId" params={{ agentId }} search={{ tab: 'playground' }}>
          Playground
        </Link>
      </nav>
      <QueryState query={agent} loadingLabel="Loading the agent…">
        {(found) => (tab === 'playground' ? <Playground agent={found} /> : <AgentSettings agent={found} />)}
      </QueryState>
    </Page>
  );
}
