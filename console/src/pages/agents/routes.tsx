import { createRoute, lazyRouteComponent } from '@tanstack/react-router';
import { appRoute } from '../../routes/app.js';
import { AgentsPage } from './agents-page.js';

const validatePage = (search: Record<string, unknown>): { page?: number } => {
  const page = Number(search.page);
  return Number.isInteger(page) && page > 1 ? { page } : {};
};

/** The agent page's tab (Settings when absent) and, on the Playground, the session shown. */
export interface AgentSearch {
  tab?: 'playground';
  session?: string;
}

const validateAgentSearch = (search: Record<string, unknown>): AgentSearch => {
  if (search.tab !== 'playground') return {};
  return typeof search.session === 'string' && search.session !== '' ? { tab: 'playground', session: search.session } : { tab: 'playground' };
};

export const agentsRoute = createRoute({ getParentRoute: () => appRoute, path: 'agents', validateSearch: validatePage, component: AgentsPage });
export const agentRoute = createRoute({
  getParentRoute: () => appRoute,
  path: 'agents/$agentId',
  validateSearch: validateAgentSearch,
  component: lazyRouteComponent(() => import('./agent-page.js'), 'AgentPage'),
});
export const toolsRoute = createRoute({ getParentRoute: () => appRoute, path: 'tools', validateSearch: validatePage, component: lazyRouteComponent(() => import('./tools-page.js'), 'ToolsPage') });
export const agentRoutes = [agentsRoute, agentRoute, toolsRoute] as const;
