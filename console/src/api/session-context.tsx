import type { AgentPlatformClient } from '@agent-platform/client';
import { useQuery, useQueryClient, type QueryKey, type UseQueryOptions } from '@tanstack/react-query';
import { createContext, useContext, useSyncExternalStore, type ReactNode } from 'react';
import type { Session, SessionState } from './session.js';

const SessionContext = createContext<Session | undefined>(undefined);

export function SessionProvider({ session, children }: { session: Session; children: ReactNode }) {
  return <SessionContext.Provider value={session}>{children}</SessionContext.Provider>;
}

export function useSession(): { session: Session; state: SessionState } {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside SessionProvider');
  const state = useSyncExternalStore(session.subscribe, () => session.snapshot);
  return { session, state };
}

export function useClient(): AgentPlatformClient {
  return useSession().session.client;
}

/**
 * A query of the current tenant: its key starts with the tenant, so switching tenants never shows
 * one tenant's cached data under another.
 */
export function useTenantQuery<Data>(key: QueryKey, fetcher: (client: AgentPlatformClient) => Promise<Data>, options: Omit<UseQueryOptions<Data>, 'queryKey' | 'queryFn'> = {}) {
  const { session, state } = useSession();
  return useQuery<Data>({ queryKey: [state.tenantId, ...key], queryFn: () => fetcher(session.client), ...options });
}

/**
 * Marks stale every query whose key (after the tenant) starts with `area`: `invalidate('agents')`
 * after an agent changed refetches the lists and the agent's own page.
 */
export function useInvalidate(): (area: string) => Promise<void> {
  const queryClient = useQueryClient();
  return (area) => queryClient.invalidateQueries({ predicate: (query) => query.queryKey[1] === area });
}
