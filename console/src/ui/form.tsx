import { useId, type ReactElement, type ReactNode } from 'react';
import { cloneElement } from 'react';
import { fieldError } from '../api/call.js';

/**
 * A labelled control with its hint and the API's message for its field (`details[].field`),
 * tied to the control for screen readers.
 */
export function Field({ label, field, error, hint, children }: { label: string; field?: string; error?: unknown; hint?: ReactNode; children: ReactElement<Record<string, unknown>> }) {
  const id = useId();
  const message = field ? fieldError(error, field) : undefined;
  const described = [hint ? `${id}-hint` : undefined, message ? `${id}-error` : undefined].filter(Boolean).join(' ') || undefined;
  return (
    <div className={message ? 'field field-invalid' : 'field'}>
      <label htmlFor={id}>{label}</label>
      {cloneElement(children, { id, 'aria-describedby': described, 'aria-invalid': message ? true : undefined })}
      {hint ? (
        <small id={`${id}-hint`} className="hint">
          {hint}
        </small>
      ) : null}
      {message ? (
        <small id={`${id}-error`} className="field-error">
          {message}
        </small>
      ) : null}
    </div>
  );
}

/** The values of a submitted form, by control name. */
export function formValues(form: HTMLFormElement): Record<string, string> {
  const values: Record<string, string> = {};
  for (const [name, value] of new FormData(form)) if (typeof value === 'string') values[name] = value;
  return values;
}
