import { createRoute } from '@tanstack/react-router';
import { appRoute } from '../../routes/app.js';
import { Page } from '../../ui/page.js';

export const apiKeysRoute = createRoute({ getParentRoute: () => appRoute, path: 'settings/api-keys', component: () => <Page title="API keys">{null}</Page> });
export const membersRoute = createRoute({ getParentRoute: () => appRoute, path: 'settings/members', component: () => <Page title="Members">{null}</Page> });
export const creditsRoute = createRoute({ getParentRoute: () => appRoute, path: 'settings/credits', component: () => <Page title="Credits">{null}</Page> });
export const settingsRoutes = [apiKeysRoute, membersRoute, creditsRoute] as const;
