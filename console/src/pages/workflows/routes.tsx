import { createRoute, lazyRouteComponent } from '@tanstack/react-router';
import { appRoute } from '../../routes/app.js';
import { pageNumber, positiveInteger, validatePage } from '../../routes/search-params.js';
import { validateExecutionsSearch } from './executions-search.js';

export const WORKFLOW_TABS = ['graph', 'edit', 'versions'] as const;
export type WorkflowTab = (typeof WORKFLOW_TABS)[number];

export interface WorkflowSearch {
  tab?: Exclude<WorkflowTab, 'graph'>;
  /** On the versions tab: the version being viewed. */
  version?: number;
  /** On the versions tab: the page of the list. */
  page?: number;
}

const validateWorkflowSearch = (search: Record<string, unknown>): WorkflowSearch => {
  const tab = WORKFLOW_TABS.find((known) => known === search.tab && known !== 'graph') as WorkflowSearch['tab'];
  const version = positiveInteger(search.version);
  const page = pageNumber(search.page);
  return { ...(tab ? { tab } : {}), ...(tab === 'versions' && version ? { version } : {}), ...(tab === 'versions' && page ? { page } : {}) };
};

export const workflowsRoute = createRoute({
  getParentRoute: () => appRoute,
  path: 'workflows',
  validateSearch: validatePage,
  component: lazyRouteComponent(() => import('./workflows-page.js'), 'WorkflowsPage'),
});
export const workflowRoute = createRoute({
  getParentRoute: () => appRoute,
  path: 'workflows/$workflowId',
  validateSearch: validateWorkflowSearch,
  component: lazyRouteComponent(() => import('./workflow-page.js'), 'WorkflowPage'),
});
export const executionsRoute = createRoute({
  getParentRoute: () => appRoute,
  path: 'workflows/$workflowId/executions',
  validateSearch: validateExecutionsSearch,
  component: lazyRouteComponent(() => import('./executions-page.js'), 'ExecutionsPage'),
});
export const executionRoute = createRoute({
  getParentRoute: () => appRoute,
  path: 'workflows/$workflowId/executions/$executionId',
  component: lazyRouteComponent(() => import('./execution-page.js'), 'ExecutionPage'),
});
export const workflowsRoutes = [workflowsRoute, workflowRoute, executionsRoute, executionRoute] as const;
