import { createRoute, lazyRouteComponent } from '@tanstack/react-router';
import { appRoute } from '../../routes/app.js';
import { definedOnly, optionalText, validatePage } from '../../routes/search-params.js';
import { AgentsPage } from './agents-page.js';

/** The agent page's tab (Settings when absent) and, on the Playground, the session shown. */
export interface AgentSearch {
  tab?: 'playground';
  session?: string;
}

const validateAgentSearch = (search: Record<string, unknown>): AgentSearch => (search.tab === 'playground' ? definedOnly<AgentSearch>({ tab: 'playground', session: optionalText(search.session) }) : {});

export const agentsRoute = createRoute({ getParentRoute: () => appRoute, path: 'agents', validateSearch: validatePage, component: AgentsPage });
export const agentRoute = createRoute({
  getParentRoute: () => appRoute,
  path: 'agents/$agentId',
  validateSearch: validateAgentSearch,
  component: lazyRouteComponent(() => import('./agent-page.js'), 'AgentPage'),
});
export const toolsRoute = createRoute({ getParentRoute: () => appRoute, path: 'tools', validateSearch: validatePage, component: lazyRouteComponent(() => import('./tools-page.js'), 'ToolsPage') });
export const agentRoutes = [agentsRoute, agentRoute, toolsRoute] as const;
