import { createRoute, lazyRouteComponent } from '@tanstack/react-router';
import { appRoute } from '../../routes/app.js';
import { MEMORY_TYPES } from '../agents/memory-types.js';

export type MemoryType = (typeof MEMORY_TYPES)[number];

export function isMemoryType(value: unknown): value is MemoryType {
  return MEMORY_TYPES.some((memoryType) => memoryType === value);
}

/**
 * What the memory page shows, all in the URL so a view can be linked and reloaded: the agent,
 * the tab (browse or search), the filters both share, the search itself and the item opened.
 */
export interface MemorySearch {
  agent_id?: string;
  view?: 'search';
  memory_type?: MemoryType;
  user_id?: string;
  page?: number;
  /** The search's words; the search runs when present. */
  q?: string;
  /** The metadata filter as the JSON text typed, parsed when the search runs. */
  filter?: string;
  top_k?: number;
  min_score?: number;
  /** The memory item whose detail and history are open. */
  item?: string;
}

/** A text parameter; a number is taken back as text (the router reads `?user_id=42` as 42). */
function text(value: unknown): string | undefined {
  if (typeof value === 'number') return String(value);
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

function number(value: unknown, accept: (value: number) => boolean): number | undefined {
  const parsed = typeof value === 'string' ? Number(value) : value;
  return typeof parsed === 'number' && Number.isFinite(parsed) && accept(parsed) ? parsed : undefined;
}

export function validateMemorySearch(search: Record<string, unknown>): MemorySearch {
  const fields: MemorySearch = {
    agent_id: text(search.agent_id),
    view: search.view === 'search' ? 'search' : undefined,
    memory_type: isMemoryType(search.memory_type) ? search.memory_type : undefined,
    user_id: text(search.user_id),
    page: number(search.page, (page) => Number.isInteger(page) && page > 1),
    q: text(search.q),
    // An object typed straight into the address is read as the JSON it was.
    filter: typeof search.filter === 'object' && search.filter !== null ? JSON.stringify(search.filter) : text(search.filter),
    // Out of range is the API's to say (422 on the field), not to be dropped silently here.
    top_k: number(search.top_k, () => true),
    min_score: number(search.min_score, () => true),
    item: text(search.item),
  };
  // Absent keys stay absent, so links and the address carry only what is set.
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
}

export const memoryRoute = createRoute({
  getParentRoute: () => appRoute,
  path: 'memory',
  validateSearch: validateMemorySearch,
  component: lazyRouteComponent(() => import('./memory-page.js'), 'MemoryPage'),
});
export const memoryRoutes = [memoryRoute] as const;
