import { createRoute, lazyRouteComponent } from '@tanstack/react-router';
import { appRoute } from '../../routes/app.js';
import { validatePage } from '../../routes/search-params.js';

export const apiKeysRoute = createRoute({
  getParentRoute: () => appRoute,
  path: 'settings/api-keys',
  validateSearch: validatePage,
  component: lazyRouteComponent(() => import('./api-keys-page.js'), 'ApiKeysPage'),
});
export const membersRoute = createRoute({
  getParentRoute: () => appRoute,
  path: 'settings/members',
  validateSearch: validatePage,
  component: lazyRouteComponent(() => import('./members-page.js'), 'MembersPage'),
});
export const creditsRoute = createRoute({
  getParentRoute: () => appRoute,
  path: 'settings/credits',
  validateSearch: validatePage,
  component: lazyRouteComponent(() => import('./credits-page.js'), 'CreditsPage'),
});
export const settingsRoutes = [apiKeysRoute, membersRoute, creditsRoute] as const;
