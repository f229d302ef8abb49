import { RUN_STATUSES, RUN_TRIGGERS, type RunStatus, type RunTrigger } from '@agent-platform/client';
import { definedOnly, optionalInstant } from '../../routes/search-params.js';

/** The filters of an agent's runs list, in the URL so a reload or a link keeps them. */
export interface RunsFilter {
  status?: RunStatus;
  trigger?: RunTrigger;
  /** Runs started at or after this instant (ISO 8601). */
  since?: string;
  /** Runs started before this instant. */
  until?: string;
}

export function runsFilter(search: Record<string, unknown>): RunsFilter {
  return definedOnly<RunsFilter>({
    status: RUN_STATUSES.find((known) => known === search.status),
    trigger: RUN_TRIGGERS.find((known) => known === search.trigger),
    since: optionalInstant(search.since),
    until: optionalInstant(search.until),
  });
}
