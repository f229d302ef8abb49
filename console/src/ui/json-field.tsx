import type { ReactNode, TextareaHTMLAttributes } from 'react';
import { Field } from './form.js';

/**
 * A JSON text box: its field's message, whether a mistake found before sending (see
 * `api/local-errors.ts`) or the API's, beside it; `message` for one the page says of it.
 */
export function JsonField({
  label,
  field,
  error,
  hint,
  message,
  className = 'code',
  ...textarea
}: { label: string; field: string; error: unknown; hint?: ReactNode; message?: string | undefined } & Omit<TextareaHTMLAttributes<HTMLTextAreaElement>, 'id' | 'aria-describedby' | 'aria-invalid'>) {
  return (
    <Field label={label} field={field} error={error} hint={hint} message={message}>
      <textarea name={field} className={className} spellCheck={false} {...textarea} />
    </Field>
  );
}

/** A JSON object as a JSON field starts with it: indented, or empty for an empty object. */
export function jsonObjectText(value: Record<string, unknown>): string {
  return Object.keys(value).length === 0 ? '' : JSON.stringify(value, null, 2);
}
