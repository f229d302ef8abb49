import { createRoute, lazyRouteComponent } from '@tanstack/react-router';
import { appRoute } from '../../routes/app.js';
import { definedOnly, optionalText, positiveInteger } from '../../routes/search-params.js';
import { validateMemorySearch } from './memory-search.js';

export const memoryRoute = createRoute({
  getParentRoute: () => appRoute,
  path: 'memory',
  validateSearch: validateMemorySearch,
  component: lazyRouteComponent(() => import('./memory-page.js'), 'MemoryPage'),
});

/**
 * A document's page: the chunk a citation pointed at (found, scrolled to, marked), and the page of
 * chunks shown. Page 1 stays in the address once paged to: without a page, a chunk's own is shown.
 */
export interface DocumentSearch {
  page?: number;
  chunk?: string;
}

export const documentRoute = createRoute({
  getParentRoute: () => appRoute,
  path: 'memory/documents/$documentId',
  validateSearch: (search: Record<string, unknown>): DocumentSearch => definedOnly<DocumentSearch>({ page: positiveInteger(search.page), chunk: optionalText(search.chunk) }),
  component: lazyRouteComponent(() => import('./document-page.js'), 'DocumentPage'),
});
export const memoryRoutes = [memoryRoute, documentRoute] as const;
