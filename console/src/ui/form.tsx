import { useId, type ReactElement, type ReactNode } from 'react';
import { cloneElement } from 'react';
import { fieldError } from '../api/call.js';
import { useShowsField } from './shown-fields.js';

/**
 * A labelled control with its hint and the API's message for its field (`details[].field`),
 * tied to the control for screen readers. `message` is the page's own, for a control that stands
 * for more than one of the API's fields; the field's own message comes first.
 */
export function Field({ label, field, error, hint, message, children }: { label: string; field?: string; error?: unknown; hint?: ReactNode; message?: string | undefined; children: ReactElement<Record<string, unknown>> }) {
  const id = useId();
  const own = field ? fieldError(error, field) : undefined;
  useShowsField(error, field, own !== undefined);
  const shown = own ?? message;
  const described = [hint ? `${id}-hint` : undefined, shown ? `${id}-error` : undefined].filter(Boolean).join(' ') || undefined;
  return (
    <div className={shown ? 'field field-invalid' : 'field'}>
      <label htmlFor={id}>{label}</label>
      {cloneElement(children, { id, 'aria-describedby': described, 'aria-invalid': shown ? true : undefined })}
      {hint ? (
        <small id={`${id}-hint`} className="hint">
          {hint}
        </small>
      ) : null}
      {shown ? (
        <small id={`${id}-error`} className="field-error">
          {shown}
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

/**
 * The API's message for a group of controls as a whole (a fieldset's field: `scorers[1]`), shown
 * in the group; the notice above the form then leaves it out. `id` ties it to the group
 * (`aria-describedby`).
 */
export function GroupMessage({ id, field, error }: { id: string; field: string; error: unknown }) {
  const message = fieldError(error, field);
  useShowsField(error, field, message !== undefined);
  return message ? (
    <small id={id} className="fieldset-error">
      {message}
    </small>
  ) : null;
}
