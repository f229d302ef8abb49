import type { CursorPosition } from '../ui/cursor-pager.js';

/**
 * Reading a page's search parameters (`validateSearch`), so each page can be linked and reloaded
 * and a parameter typed wrongly into the address is dropped rather than trusted.
 */

/** A whole number from 1 up; the router reads `?page=2` as 2, a typed-in `?page=x` as text. */
export function positiveInteger(value: unknown): number | undefined {
  const number = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  return typeof number === 'number' && Number.isInteger(number) && number >= 1 ? number : undefined;
}

/** Any finite number: whether it is in range is the API's to say (its 422 on the field), not to be dropped here. */
export function optionalNumber(value: unknown): number | undefined {
  const number = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  return typeof number === 'number' && Number.isFinite(number) ? number : undefined;
}

/** A list's page: the first one is no parameter at all. */
export function pageNumber(value: unknown): number | undefined {
  const page = positiveInteger(value);
  return page !== undefined && page > 1 ? page : undefined;
}

/** The search of a page whose only parameter is its list's page. */
export function validatePage(search: Record<string, unknown>): { page?: number } {
  const page = pageNumber(search.page);
  return page === undefined ? {} : { page };
}

/** A text parameter (an id, a cursor, words); a number is taken back as text (`?user_id=42` reads as 42). */
export function optionalText(value: unknown): string | undefined {
  if (typeof value === 'number') return String(value);
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

/** The cursors of the pages before the one shown, oldest first: how a cursor-paged list steps back. */
export function cursorTrail(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((cursor): cursor is string => typeof cursor === 'string' && cursor !== '') : [];
}

/** A cursor-paged list's position: the cursor shown and, with one, the trail before it. */
export function cursorPosition(search: Record<string, unknown>): CursorPosition {
  const cursor = optionalText(search.cursor);
  const back = cursorTrail(search.back);
  return { ...(cursor ? { cursor } : {}), ...(cursor && back.length > 0 ? { back } : {}) };
}

/** An instant (`since`, `until`), written back as the API takes it (ISO 8601, UTC); anything else is dropped. */
export function optionalInstant(value: unknown): string | undefined {
  const text = optionalText(value);
  const time = text === undefined ? Number.NaN : Date.parse(text);
  return Number.isNaN(time) ? undefined : new Date(time).toISOString();
}

/** Only the parameters that are set, so links and the address carry nothing else. */
export function definedOnly<Search extends object>(search: Search): Search {
  return Object.fromEntries(Object.entries(search).filter(([, value]) => value !== undefined && !(Array.isArray(value) && value.length === 0))) as Search;
}
