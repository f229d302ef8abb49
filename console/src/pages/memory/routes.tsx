import { createRoute } from '@tanstack/react-router';
import { appRoute } from '../../routes/app.js';
import { Page } from '../../ui/page.js';

export const memoryRoute = createRoute({ getParentRoute: () => appRoute, path: 'memory', component: () => <Page title="Memory">{null}</Page> });
export const memoryRoutes = [memoryRoute] as const;
