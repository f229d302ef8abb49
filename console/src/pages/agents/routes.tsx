import { createRoute, lazyRouteComponent } from '@tanstack/react-router';
import { appRoute } from '../../routes/app.js';
import { cursorPosition, definedOnly, optionalText, pageNumber, positiveInteger, validatePage } from '../../routes/search-params.js';
import type { CursorPosition } from '../../ui/cursor-pager.js';
import { runsFilter, type RunsFilter } from '../runs/runs-search.js';
import { AgentsPage } from './agents-page.js';

/**
 * The agent page's tab (Settings when absent) and what that tab shows: on the Playground the
 * session, on Runs the filters and the page, on Versions the version viewed and the list's page.
 */
export interface AgentSearch extends RunsFilter, CursorPosition {
  tab?: 'playground' | 'runs' | 'versions';
  session?: string;
  version?: number;
  page?: number;
}

function validateAgentSearch(search: Record<string, unknown>): AgentSearch {
  switch (search.tab) {
    case 'playground':
      return definedOnly<AgentSearch>({ tab: 'playground', session: optionalText(search.session) });
    case 'runs':
      return { tab: 'runs', ...runsFilter(search), ...cursorPosition(search) };
    case 'versions':
      return definedOnly<AgentSearch>({ tab: 'versions', version: positiveInteger(search.version), page: pageNumber(search.page) });
    default:
      return {};
  }
}

export const agentsRoute = createRoute({ getParentRoute: () => appRoute, path: 'agents', validateSearch: validatePage, component: AgentsPage });
export const agentRoute = createRoute({
  getParentRoute: () => appRoute,
  path: 'agents/$agentId',
  validateSearch: validateAgentSearch,
  component: lazyRouteComponent(() => import('./agent-page.js'), 'AgentPage'),
});
export const toolsRoute = createRoute({ getParentRoute: () => appRoute, path: 'tools', validateSearch: validatePage, component: lazyRouteComponent(() => import('./tools-page.js'), 'ToolsPage') });
export const agentRoutes = [agentsRoute, agentRoute, toolsRoute] as const;
