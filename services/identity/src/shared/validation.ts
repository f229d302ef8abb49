import { DomainError, type FieldError } from '@agent-platform/kit';

/** Collects every problem of a request so the caller hears about all of them at once. */
export class FieldErrors {
  private readonly errors: FieldError[] = [];

  add(field: string, message: string): void {
    this.errors.push({ field, message });
  }

  /** Throws a validation_error naming each field, if any problem was found. */
  throwIfAny(): void {
    if (this.errors.length > 0) throw DomainError.validation([...this.errors]);
  }
}

// Deliberately loose (one @, a dot in the domain, no spaces): deliverability is the mailbox's call.
const EMAIL_PATTERN = /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/;
const MAX_EMAIL_LENGTH = 254;

/** Lower case and trimmed; decisions §3. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

export function isValidEmail(email: string): boolean {
  return email.length <= MAX_EMAIL_LENGTH && EMAIL_PATTERN.test(email);
}

/** Length in characters (code points), not UTF-16 units, so "8 characters" means what users think. */
export function characterCount(value: string): number {
  return [...value].length;
}

/** An optional text field: trimmed, and absent when empty. */
export function optionalText(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}
