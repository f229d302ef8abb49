import type { RunStatus } from '@agent-platform/client';
import { call } from '../../api/call.js';
import { LIVE_INTERVAL_MS } from '../../api/live.js';
import { useTenantQuery } from '../../api/session-context.js';

/**
 * A run that is still doing something by itself. One awaiting approval is not: it changes only
 * when a person decides, so it is not polled for hours.
 */
export function isLiveRun(status: RunStatus | undefined): boolean {
  return status === 'queued' || status === 'running';
}

/** GET /runs/{run_id}; `live` reads it again while it runs. */
export function useRun(runId: string, { live = false }: { live?: boolean } = {}) {
  return useTenantQuery(
    ['runs', runId],
    (client) => call(client.GET('/api/v1/runs/{run_id}', { params: { path: { run_id: runId } } })),
    live ? { refetchInterval: (query) => (isLiveRun(query.state.data?.status) ? LIVE_INTERVAL_MS : false) } : {},
  );
}
