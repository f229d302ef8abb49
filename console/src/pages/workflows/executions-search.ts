import { EXECUTION_STATUSES, type ExecutionStatus } from '@agent-platform/client';
import { cursorPosition } from '../../routes/search-params.js';
import type { CursorPosition } from '../../ui/cursor-pager.js';

/** What the executions list shows, in the URL: the status filtered on and the page. */
export interface ExecutionsSearch extends CursorPosition {
  status?: ExecutionStatus;
}

export function validateExecutionsSearch(search: Record<string, unknown>): ExecutionsSearch {
  const status = EXECUTION_STATUSES.find((known) => known === search.status);
  return { ...(status ? { status } : {}), ...cursorPosition(search) };
}
