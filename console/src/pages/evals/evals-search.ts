import { definedOnly, optionalText, pageNumber } from '../../routes/search-params.js';

/** Which evals a list shows (the API's own filters), in the URL so a reload or a link keeps them; a new eval starts with them chosen. */
export interface EvalsFilter {
  agent_id?: string;
  dataset_id?: string;
}

export function evalsFilter(search: Record<string, unknown>): EvalsFilter {
  return definedOnly<EvalsFilter>({ agent_id: optionalText(search.agent_id), dataset_id: optionalText(search.dataset_id) });
}

export function validateEvalsSearch(search: Record<string, unknown>): EvalsFilter & { page?: number } {
  return definedOnly({ ...evalsFilter(search), page: pageNumber(search.page) });
}

/** Two evals of one dataset, compared: the one compared against (`base`), the one compared with it, and the page of items. */
export interface CompareSearch {
  base?: string;
  candidate?: string;
  page?: number;
}

export function validateCompareSearch(search: Record<string, unknown>): CompareSearch {
  return definedOnly<CompareSearch>({ base: optionalText(search.base), candidate: optionalText(search.candidate), page: pageNumber(search.page) });
}
