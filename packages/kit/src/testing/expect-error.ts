import { expect } from 'vitest';
import { DomainError, type ErrorCode } from '../errors.js';

/** Awaits a rejection and checks it is the DomainError `code`; returns it for further checks. */
export async function expectError(promise: Promise<unknown>, code: ErrorCode): Promise<DomainError> {
  const error: unknown = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error, `expected ${code}`).toBeInstanceOf(DomainError);
  expect((error as DomainError).code).toBe(code);
  return error as DomainError;
}
