import { MEMORY_TYPES, type MemoryType } from '@agent-platform/client';
import { definedOnly, optionalNumber, optionalText, pageNumber } from '../../routes/search-params.js';

export function isMemoryType(value: unknown): value is MemoryType {
  return MEMORY_TYPES.some((memoryType) => memoryType === value);
}

/** The memory page's tabs besides Browse (no `view`): search, and the agent's documents. */
export const MEMORY_VIEWS = ['search', 'documents'] as const;
export type MemoryView = (typeof MEMORY_VIEWS)[number];

/**
 * What the memory page shows, all in the URL so a view can be linked and reloaded: the agent,
 * the tab (browse, search or documents), the filters browse and search share, the search itself,
 * the item opened, and the page of the list shown (items, or documents).
 */
export interface MemorySearch {
  agent_id?: string;
  view?: MemoryView;
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

export function validateMemorySearch(search: Record<string, unknown>): MemorySearch {
  return definedOnly<MemorySearch>({
    agent_id: optionalText(search.agent_id),
    view: MEMORY_VIEWS.find((view) => view === search.view),
    memory_type: isMemoryType(search.memory_type) ? search.memory_type : undefined,
    user_id: optionalText(search.user_id),
    page: pageNumber(search.page),
    q: optionalText(search.q),
    // An object typed straight into the address is read as the JSON it was.
    filter: typeof search.filter === 'object' && search.filter !== null ? JSON.stringify(search.filter) : optionalText(search.filter),
    top_k: optionalNumber(search.top_k),
    min_score: optionalNumber(search.min_score),
    item: optionalText(search.item),
  });
}
