import { DomainError } from './errors.js';

/**
 * A version number asked for (a workflow's, decisions §13.1; an agent's, §16): versions count
 * from 1, and proto3 sends an absent number as 0, so anything below 1 is a validation_error.
 */
export function requireVersionNumber(version: number): void {
  if (!Number.isInteger(version) || version < 1) throw DomainError.validation([{ field: 'version', message: 'must be an integer of at least 1' }]);
}
