import { createRoute } from '@tanstack/react-router';
import { appRoute } from '../../routes/app.js';
import { Page } from '../../ui/page.js';

export const workflowsRoute = createRoute({ getParentRoute: () => appRoute, path: 'workflows', component: () => <Page title="Workflows">{null}</Page> });
export const workflowsRoutes = [workflowsRoute] as const;
