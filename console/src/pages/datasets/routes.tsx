import { createRoute, lazyRouteComponent } from '@tanstack/react-router';
import { appRoute } from '../../routes/app.js';
import { cursorPosition, validatePage } from '../../routes/search-params.js';

export const datasetsRoute = createRoute({
  getParentRoute: () => appRoute,
  path: 'datasets',
  validateSearch: validatePage,
  component: lazyRouteComponent(() => import('./datasets-page.js'), 'DatasetsPage'),
});
/** A dataset and its items, a page at a time by cursor (the page in the URL). */
export const datasetRoute = createRoute({
  getParentRoute: () => appRoute,
  path: 'datasets/$datasetId',
  validateSearch: cursorPosition,
  component: lazyRouteComponent(() => import('./dataset-page.js'), 'DatasetPage'),
});
export const datasetsRoutes = [datasetsRoute, datasetRoute] as const;
