import { DomainError } from '@agent-platform/kit';
import { describe, expect, it } from 'vitest';
import { parsePage } from './pagination.js';

function fieldsOf(run: () => unknown): string[] {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).code).toBe('validation_error');
    return (error as DomainError).details.map((d) => d.field);
  }
  throw new Error('expected a validation_error');
}

describe('parsePage', () => {
  it('defaults to page 1 of 20 when nothing (or proto3 zero) is given', () => {
    expect(parsePage(undefined)).toEqual({ page: 1, perPage: 20, offset: 0 });
    expect(parsePage({ page: 0, perPage: 0 })).toEqual({ page: 1, perPage: 20, offset: 0 });
  });

  it('computes the offset', () => {
    expect(parsePage({ page: 3, perPage: 25 })).toEqual({ page: 3, perPage: 25, offset: 50 });
    expect(parsePage({ page: 1, perPage: 100 })).toEqual({ page: 1, perPage: 100, offset: 0 });
  });

  it('rejects out-of-range values, naming the fields', () => {
    expect(fieldsOf(() => parsePage({ page: -1, perPage: 20 }))).toEqual(['page']);
    expect(fieldsOf(() => parsePage({ page: 1, perPage: 101 }))).toEqual(['per_page']);
    expect(fieldsOf(() => parsePage({ page: -2, perPage: -5 }))).toEqual(['page', 'per_page']);
  });
});
