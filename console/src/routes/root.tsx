import type { QueryClient } from '@tanstack/react-query';
import { createRootRouteWithContext, Outlet } from '@tanstack/react-router';
import type { Session } from '../api/session.js';

export interface RouterContext {
  session: Session;
  queryClient: QueryClient;
}

export const rootRoute = createRootRouteWithContext<RouterContext>()({
  component: Outlet,
  notFoundComponent: () => (
    <main className="auth">
      <h1>Page not found</h1>
      <p>
        <a href="/console/">Go to the console</a>
      </p>
    </main>
  ),
});
