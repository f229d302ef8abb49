import { DomainError } from './errors.js';
import { describe, expect, it } from 'vitest';
import { encodeCursor, parseCursorPage, parsePage } from './paging.js';

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
  it('defaults 0 (proto3 "absent") and a missing request to page 1 of 20', () => {
    expect(parsePage(undefined)).toEqual({ page: 1, perPage: 20, offset: 0 });
    expect(parsePage({ page: 0, perPage: 0 })).toEqual({ page: 1, perPage: 20, offset: 0 });
    expect(parsePage({ page: 3, perPage: 25 })).toEqual({ page: 3, perPage: 25, offset: 50 });
  });

  it('names out-of-range fields', () => {
    expect(fieldsOf(() => parsePage({ page: -1, perPage: 101 }))).toEqual(['page', 'per_page']);
    expect(fieldsOf(() => parsePage({ page: 1, perPage: 101 }))).toEqual(['per_page']);
  });
});

describe('parseCursorPage', () => {
  it('round-trips an opaque cursor', () => {
    const cursor = encodeCursor({ createdAt: new Date('2026-11-01T10:00:00.123Z'), id: 'dlv_01JD0000000000000000000000' });
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(parseCursorPage({ limit: 0, cursor })).toEqual({
      limit: 20,
      after: { createdAt: new Date('2026-11-01T10:00:00.123Z'), id: 'dlv_01JD0000000000000000000000' },
    });
    expect(parseCursorPage({ limit: 100, cursor: undefined })).toEqual({ limit: 100, after: undefined });
  });

  it('refuses a limit out of 1..100 and a cursor it did not issue', () => {
    expect(fieldsOf(() => parseCursorPage({ limit: 101, cursor: undefined }))).toEqual(['limit']);
    expect(fieldsOf(() => parseCursorPage({ limit: -1, cursor: 'garbage!' }))).toEqual(['limit', 'cursor']);
    expect(fieldsOf(() => parseCursorPage({ limit: 10, cursor: Buffer.from('yesterday|dlv_1').toString('base64url') }))).toEqual(['cursor']);
  });
});
