import { createRoute, lazyRouteComponent } from '@tanstack/react-router';
import { appRoute } from '../../routes/app.js';

/** A list's page in the URL, so it can be linked and reloaded; the first page is no parameter. */
const validatePage = (search: Record<string, unknown>): { page?: number } => {
  const page = Number(search.page);
  return Number.isInteger(page) && page > 1 ? { page } : {};
};

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
