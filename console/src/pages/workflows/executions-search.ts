import { EXECUTION_STATUSES, type ExecutionStatus } from '@agent-platform/client';
import { cursorTrail, optionalText } from '../../routes/search-params.js';

/** What the executions list shows, in the URL: the status filtered on and the page. */
export interface ExecutionsSearch {
  status?: ExecutionStatus;
  /** The cursor of the page shown (none: the newest). */
  cursor?: string;
  /** The cursors of the pages before it, oldest first, so Previous needs no second list. */
  back?: string[];
}

export function validateExecutionsSearch(search: Record<string, unknown>): ExecutionsSearch {
  const status = EXECUTION_STATUSES.find((known) => known === search.status);
  const cursor = optionalText(search.cursor);
  const back = cursorTrail(search.back);
  return { ...(status ? { status } : {}), ...(cursor ? { cursor } : {}), ...(cursor && back.length > 0 ? { back } : {}) };
}
