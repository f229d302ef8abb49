import { getRouteApi, Link } from '@tanstack/react-router';
import { QueryState } from '../../ui/feedback.js';
import { Page } from '../../ui/page.js';
import { EvalLinks } from '../evals/eval-links.js';
import { RunsTab } from '../runs/runs-tab.js';
import { useAgent } from './agent-query.js';
import { AgentSettings } from './agent-settings.js';
import { Playground } from './playground.js';
import { VersionsTab } from './versions-tab.js';
import './agents.css';

const route = getRouteApi('/app/agents/$agentId');

/** One agent: its settings, a playground to chat with it, its runs and its versions (`?tab=`); its evals are a page of their own. */
export function AgentPage() {
  const { agentId } = route.useParams();
  const { tab } = route.useSearch();
  const agent = useAgent(agentId);
  return (
    <Page title={agent.data?.name ?? 'Agent'} actions={<EvalLinks of={{ agent_id: agentId }} />}>
      {/* The router marks the current tab (class active, aria-current): Settings only without a search. */}
      <nav className="tabs" aria-label="Agent">
        <Link to="/agents/$agentId" params={{ agentId }} search={{}} activeOptions={{ exact: true }}>
          Settings
        </Link>
        <Link to="/agents/$agentId" params={{ agentId }} search={{ tab: 'playground' }}>
          Playground
        </Link>
        <Link to="/agents/$agentId" params={{ agentId }} search={{ tab: 'runs' }}>
          Runs
        </Link>
        <Link to="/agents/$agentId" params={{ agentId }} search={{ tab: 'versions' }}>
          Versions
        </Link>
      </nav>
      <QueryState query={agent} loadingLabel="Loading the agent…">
        {(found) => (tab === 'playground' ? <Playground agent={found} /> : tab === 'runs' ? <RunsTab agent={found} /> : tab === 'versions' ? <VersionsTab agent={found} /> : <AgentSettings agent={found} />)}
      </QueryState>
    </Page>
  );
}
