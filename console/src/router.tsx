import { QueryClient } from '@tanstack/react-query';
import { createRoute, createRouter, redirect } from '@tanstack/react-router';
import { ApiResponseError } from '@agent-platform/client';
import type { Session } from './api/session.js';
import { agentRoutes } from './pages/agents/routes.js';
import { authRoutes } from './pages/auth/routes.js';
import { datasetsRoutes } from './pages/datasets/routes.js';
import { evalsRoutes } from './pages/evals/routes.js';
import { memoryRoutes } from './pages/memory/routes.js';
import { runsRoutes } from './pages/runs/routes.js';
import { settingsRoutes } from './pages/settings/routes.js';
import { webhooksRoutes } from './pages/webhooks/routes.js';
import { workflowsRoutes } from './pages/workflows/routes.js';
import { appRoute } from './routes/app.js';
import { rootRoute } from './routes/root.js';

const indexRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/',
  beforeLoad: () => {
    throw redirect({ to: '/agents' });
  },
});

const routeTree = rootRoute.addChildren([indexRoute, ...authRoutes, appRoute.addChildren([...agentRoutes, ...runsRoutes, ...datasetsRoutes, ...evalsRoutes, ...memoryRoutes, ...workflowsRoutes, ...webhooksRoutes, ...settingsRoutes])]);

export function createQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      queries: {
        // A 4xx will answer the same again; only what may pass (network, 5xx, 429) is retried.
        retry: (failures, error) => failures < 2 && !(error instanceof ApiResponseError && error.status < 500 && error.status !== 429),
        staleTime: 5_000,
      },
    },
  });
}

export function createConsoleRouter(session: Session, queryClient: QueryClient) {
  return createRouter({ routeTree, basepath: '/console', context: { session, queryClient }, defaultPreload: 'intent', scrollRestoration: true });
}

declare module '@tanstack/react-router' {
  interface Register {
    router: ReturnType<typeof createConsoleRouter>;
  }
}
