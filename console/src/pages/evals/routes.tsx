import { createRoute, lazyRouteComponent } from '@tanstack/react-router';
import { appRoute } from '../../routes/app.js';
import { cursorPosition } from '../../routes/search-params.js';
import { evalsFilter, validateCompareSearch, validateEvalsSearch } from './evals-search.js';

export const evalsRoute = createRoute({
  getParentRoute: () => appRoute,
  path: 'evals',
  validateSearch: validateEvalsSearch,
  component: lazyRouteComponent(() => import('./evals-page.js'), 'EvalsPage'),
});
/** The form of a new eval, its dataset or agent already chosen when it was opened from theirs. */
export const newEvalRoute = createRoute({
  getParentRoute: () => appRoute,
  path: 'evals/new',
  validateSearch: evalsFilter,
  component: lazyRouteComponent(() => import('./new-eval-page.js'), 'NewEvalPage'),
});
export const compareEvalsRoute = createRoute({
  getParentRoute: () => appRoute,
  path: 'evals/compare',
  validateSearch: validateCompareSearch,
  component: lazyRouteComponent(() => import('./compare-page.js'), 'ComparePage'),
});
/** An eval and its results, a page at a time by cursor (the page in the URL). */
export const evalRoute = createRoute({
  getParentRoute: () => appRoute,
  path: 'evals/$evalId',
  validateSearch: cursorPosition,
  component: lazyRouteComponent(() => import('./eval-page.js'), 'EvalPage'),
});
export const evalsRoutes = [evalsRoute, newEvalRoute, compareEvalsRoute, evalRoute] as const;
