import { status } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { DomainError, ERROR_CODES, errorBody, grpcStatusOf, httpStatusOf, isErrorCode } from './errors.js';

describe('error catalogue', () => {
  it('maps every code of decisions §2 (and §17 unsupported_document) to its HTTP status', () => {
    expect(Object.fromEntries(Object.entries(ERROR_CODES).map(([code, entry]) => [code, entry.http]))).toEqual({
      invalid_request: 400,
      validation_error: 422,
      unauthorized: 401,
      insufficient_credits: 402,
      forbidden: 403,
      not_found: 404,
      conflict: 409,
      payload_too_large: 413,
      unsupported_document: 422,
      rate_limit_exceeded: 429,
      internal_error: 500,
      upstream_error: 502,
      service_unavailable: 503,
    });
  });

  it('gives gRPC a status class, never an HTTP number', () => {
    expect(grpcStatusOf('not_found')).toBe(status.NOT_FOUND);
    expect(grpcStatusOf('unauthorized')).toBe(status.UNAUTHENTICATED);
    expect(grpcStatusOf('validation_error')).toBe(status.INVALID_ARGUMENT);
    expect(httpStatusOf('conflict')).toBe(409);
  });

  it('recognises only catalogued codes', () => {
    expect(isErrorCode('forbidden')).toBe(true);
    expect(isErrorCode('toString')).toBe(false);
    expect(isErrorCode('teapot')).toBe(false);
  });
});

describe('errorBody', () => {
  it('is the flat format with details and retry_after only when present', () => {
    expect(errorBody(new DomainError('not_found', 'Agent not found.'))).toEqual({ error: 'not_found', message: 'Agent not found.' });
    const validation = DomainError.validation([{ field: 'email', message: 'Invalid e-mail.' }]);
    expect(errorBody(validation)).toEqual({
      error: 'validation_error',
      message: 'The request did not pass validation.',
      details: [{ field: 'email', message: 'Invalid e-mail.' }],
    });
    expect(errorBody(new DomainError('rate_limit_exceeded', 'Slow down.', { retryAfter: 12 }))).toEqual({
      error: 'rate_limit_exceeded',
      message: 'Slow down.',
      retry_after: 12,
    });
  });
});
