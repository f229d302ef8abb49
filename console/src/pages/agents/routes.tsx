import { createRoute, lazyRouteComponent } from '@tanstack/react-router';
import { appRoute } from '../../routes/app.js';
import { AgentsPage } from './agents-page.js';

const validatePage = (search: Record<string, unknown>): { page?: number } => {
  const page = Number(search.page);
  return Number.isInteger(page) && page > 1 ? { page } : {};
};

export const agentsRoute = createRoute({ getParentRoute: () => appRoute, path: 'agents', validateSearch: validatePage, component: AgentsPage });
export const agentRoute = createRoute({ getParentRoute: () => appRoute, path: 'agents/$agentId', component: lazyRouteComponent(() => import('./agent-page.js'), 'AgentPage') });
export const toolsRoute = createRoute({ getParentRoute: () => appRoute, path: 'tools', component: () => null });
export const agentRoutes = [agentsRoute, agentRoute, toolsRoute] as const;
