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
