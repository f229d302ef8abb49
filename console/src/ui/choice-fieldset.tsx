import { useId, type ReactNode } from 'react';
import { describeError } from '../api/call.js';

/**
 * A group of checkboxes or radios with its legend, hint and the API's messages for its field and
 * each of its items (`scopes`, `scopes[2]`), tied to the group for screen readers: `Field` for a
 * control that is a set of choices.
 */
export function ChoiceFieldset({ legend, field, error, hint, className, children }: { legend: string; field: string; error: unknown; hint?: ReactNode; className?: string; children: ReactNode }) {
  const id = useId();
  const messages = describeError(error)
    .fields.filter((detail) => detail.field === field || detail.field.startsWith(`${field}[`))
    .map((detail) => (detail.field === field ? detail.message : `${detail.field}: ${detail.message}`));
  const described = [hint ? `${id}-hint` : undefined, messages.length > 0 ? `${id}-error` : undefined].filter(Boolean).join(' ') || undefined;
  return (
    <fieldset className={messages.length > 0 ? 'fieldset-invalid' : undefined} aria-describedby={described} aria-invalid={messages.length > 0 ? true : undefined}>
      <legend>{legend}</legend>
      {hint ? (
        <small id={`${id}-hint`} className="hint">
          {hint}
        </small>
      ) : null}
      <div className={className}>{children}</div>
      {messages.length > 0 ? (
        <small id={`${id}-error`} className="fieldset-error">
          {messages.join('; ')}
        </small>
      ) : null}
    </fieldset>
  );
}
