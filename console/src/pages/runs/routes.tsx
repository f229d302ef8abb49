import { createRoute, lazyRouteComponent } from '@tanstack/react-router';
import { appRoute } from '../../routes/app.js';

/** A run of any agent: its id is enough (GET /runs/{run_id}), so a child run links as its parent does. */
export const runRoute = createRoute({
  getParentRoute: () => appRoute,
  path: 'runs/$runId',
  component: lazyRouteComponent(() => import('./run-page.js'), 'RunPage'),
});
export const runsRoutes = [runRoute] as const;
