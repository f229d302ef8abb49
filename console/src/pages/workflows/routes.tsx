import { createRoute, lazyRouteComponent } from '@tanstack/react-router';
import { appRoute } from '../../routes/app.js';
import { cursorTrail, optionalText, pageNumber, positiveInteger, validatePage } from '../../routes/search-params.js';

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

export const EXECUTION_STATUSES = ['running', 'waiting', 'completed', 'failed', 'cancelled'] as const;
export type ExecutionStatus = (typeof EXECUTION_STATUSES)[number];

export interface ExecutionsSearch {
  status?: ExecutionStatus;
  /** The cursor of the page shown (none: the newest). */
  cursor?: string;
  /** The cursors of the pages before it, oldest first, so Previous needs no second list. */
  back?: string[];
}

const validateExecutionsSearch = (search: Record<string, unknown>): ExecutionsSearch => {
  const status = EXECUTION_STATUSES.find((known) => known === search.status);
  const cursor = optionalText(search.cursor);
  const back = cursorTrail(search.back);
  return { ...(status ? { status } : {}), ...(cursor ? { cursor } : {}), ...(cursor && back.length > 0 ? { back } : {}) };
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
