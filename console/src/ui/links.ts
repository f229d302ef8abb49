/**
 * For links to the same page that differ only in their search (tabs, filters, an opened item):
 * the router calls a link active whenever its search is part of the current one, so every such
 * link would be; with these options only the link to exactly this view is.
 */
export const EXACT_SEARCH = { exact: true, includeSearch: true } as const;

/** The same, for links that show being current themselves (or not at all): no active class. */
export const EXACT_LINK = { activeOptions: EXACT_SEARCH, activeProps: {} } as const;
