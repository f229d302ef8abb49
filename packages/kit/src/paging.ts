import type { CursorPageRequest, PageRequest } from '@agent-platform/proto/common/v1';
import { DomainError, type FieldError } from './errors.js';

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

export interface Page {
  page: number;
  perPage: number;
  /** Rows to skip: (page - 1) × perPage. */
  offset: number;
}

/**
 * decisions §5: `page` from 1, `per_page` 1..100 (default 20). proto3 cannot tell an absent
 * number from 0, so 0 means "not given"; anything else out of range is a validation_error.
 */
export function parsePage(request: PageRequest | undefined): Page {
  const p = request?.page || 1;
  const size = request?.perPage || DEFAULT_PAGE_SIZE;
  const details: FieldError[] = [];
  if (!Number.isInteger(p) || p < 1) details.push({ field: 'page', message: 'must be an integer of at least 1' });
  if (!Number.isInteger(size) || size < 1 || size > MAX_PAGE_SIZE) details.push({ field: 'per_page', message: `must be an integer from 1 to ${MAX_PAGE_SIZE}` });
  if (details.length > 0) throw DomainError.validation(details);
  return { page: p, perPage: size, offset: (p - 1) * size };
}

/** Position after the last item of a page, newest-first order: (created_at, id). */
export interface Cursor {
  createdAt: Date;
  id: string;
}

export interface CursorPage {
  limit: number;
  after: Cursor | undefined;
}

/** `limit` 1..100 (0 = default 20) and an opaque cursor from a previous page. */
export function parseCursorPage(request: CursorPageRequest | undefined): CursorPage {
  const size = request?.limit || DEFAULT_PAGE_SIZE;
  const cursor = request?.cursor;
  const details: FieldError[] = [];
  if (!Number.isInteger(size) || size < 1 || size > MAX_PAGE_SIZE) details.push({ field: 'limit', message: `must be an integer from 1 to ${MAX_PAGE_SIZE}` });
  const after = cursor === undefined || cursor === '' ? undefined : decodeCursor(cursor);
  if (after === null) details.push({ field: 'cursor', message: 'is not a cursor this list issued' });
  if (details.length > 0) throw DomainError.validation(details);
  return { limit: size, after: after ?? undefined };
}

/** Opaque to clients: base64url of `<ISO created_at>|<id>`. */
export function encodeCursor(cursor: Cursor): string {
  return Buffer.from(`${cursor.createdAt.toISOString()}|${cursor.id}`, 'utf8').toString('base64url');
}

function decodeCursor(text: string): Cursor | null {
  if (!/^[A-Za-z0-9_-]+$/.test(text)) return null;
  const [iso = '', id = '', ...rest] = Buffer.from(text, 'base64url').toString('utf8').split('|');
  const createdAt = new Date(iso);
  if (rest.length > 0 || id === '' || Number.isNaN(createdAt.getTime()) || createdAt.toISOString() !== iso) return null;
  return { createdAt, id };
}
