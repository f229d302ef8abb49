import { createRoute, lazyRouteComponent } from '@tanstack/react-router';
import { appRoute } from '../../routes/app.js';
import { validateMemorySearch } from './memory-search.js';

export const memoryRoute = createRoute({
  getParentRoute: () => appRoute,
  path: 'memory',
  validateSearch: validateMemorySearch,
  component: lazyRouteComponent(() => import('./memory-page.js'), 'MemoryPage'),
});
export const memoryRoutes = [memoryRoute] as const;
