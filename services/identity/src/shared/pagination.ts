import { DomainError, type FieldError } from '@agent-platform/kit';
import type { PageRequest } from '@agent-platform/proto/common/v1';

export const DEFAULT_PER_PAGE = 20;
export const MAX_PER_PAGE = 100;

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
  const page = request?.page || 1;
  const perPage = request?.perPage || DEFAULT_PER_PAGE;
  const details: FieldError[] = [];
  if (!Number.isInteger(page) || page < 1) details.push({ field: 'page', message: 'must be an integer of at least 1' });
  if (!Number.isInteger(perPage) || perPage < 1 || perPage > MAX_PER_PAGE) {
    details.push({ field: 'per_page', message: `must be an integer from 1 to ${MAX_PER_PAGE}` });
  }
  if (details.length > 0) throw DomainError.validation(details);
  return { page, perPage, offset: (page - 1) * perPage };
}
