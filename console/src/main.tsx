import { QueryClientProvider } from '@tanstack/react-query';
import { RouterProvider } from '@tanstack/react-router';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { Session } from './api/session.js';
import { SessionProvider } from './api/session-context.js';
import { createConsoleRouter, createQueryClient } from './router.js';
import './styles.css';

const session = new Session(window.location.origin);
const queryClient = createQueryClient();
const router = createConsoleRouter(session, queryClient);
// Re-decide the current page when the session begins or ends (sign-in pages vs the console).
session.subscribe(() => void router.invalidate());

// A kept refresh token becomes a session before the first page decides where to go.
await session.restore();
createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <SessionProvider session={session}>
      <QueryClientProvider client={queryClient}>
        <RouterProvider router={router} />
      </QueryClientProvider>
    </SessionProvider>
  </StrictMode>,
);
