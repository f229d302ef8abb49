import type { Eval } from '@agent-platform/client';
import { call } from '../../api/call.js';
import { LIVE_INTERVAL_MS } from '../../api/live.js';
import { useTenantQuery } from '../../api/session-context.js';
import type { EvalsFilter } from './evals-search.js';

export const isRunning = (evaluation: Pick<Eval, 'status'> | undefined) => evaluation?.status === 'running';

/** Read again while it runs, and no more once it has completed. */
export function useEval(evalId: string) {
  return useTenantQuery(['evals', evalId], (client) => call(client.GET('/api/v1/evals/{eval_id}', { params: { path: { eval_id: evalId } } })), {
    refetchInterval: (query) => (isRunning(query.state.data) ? LIVE_INTERVAL_MS : false),
  });
}

/** A page of evals, newest first; with `live`, read again while one of them runs (the list shows their progress; a list to choose from needs no more). */
export function useEvalList(filter: EvalsFilter, page: number, perPage: number, { live = false }: { live?: boolean } = {}) {
  return useTenantQuery(
    ['evals', 'list', filter, page, perPage],
    (client) => call(client.GET('/api/v1/evals', { params: { query: { ...filter, page, per_page: perPage } } })),
    live ? { refetchInterval: (query) => (query.state.data?.items.some(isRunning) ? LIVE_INTERVAL_MS : false) } : {},
  );
}
