import { createRoute } from '@tanstack/react-router';
import { appRoute } from '../../routes/app.js';
import { Page } from '../../ui/page.js';

export const webhooksRoute = createRoute({ getParentRoute: () => appRoute, path: 'webhooks', component: () => <Page title="Webhooks">{null}</Page> });
export const webhooksRoutes = [webhooksRoute] as const;
