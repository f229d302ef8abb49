import { useId, type ReactNode } from 'react';

export type ParsedJson = { value: Record<string, unknown>; problem?: undefined } | { value?: undefined; problem: string };

/** A JSON object typed by a person, or what is wrong with it (said before anything is sent). */
export function parseJsonObject(text: string): ParsedJson {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { problem: `This is not valid JSON: ${error instanceof Error ? error.message : String(error)}` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { problem: 'This must be a JSON object: { … }.' };
  return { value: value as Record<string, unknown> };
}

/**
 * A labelled JSON text area, with its hint and the problem found in it (invalid JSON, or the API's
 * message for the field it stands for), tied to it for screen readers like `Field`.
 */
export function JsonField({ label, name, value, onChange, problem, hint, rows = 14 }: { label: string; name: string; value: string; onChange: (text: string) => void; problem?: string | undefined; hint?: ReactNode; rows?: number }) {
  const id = useId();
  const described = [hint ? `${id}-hint` : undefined, problem ? `${id}-error` : undefined].filter(Boolean).join(' ') || undefined;
  return (
    <div className={problem ? 'field field-invalid' : 'field'}>
      <label htmlFor={id}>{label}</label>
      <textarea id={id} name={name} className="code json-input" rows={rows} spellCheck={false} value={value} onChange={(event) => onChange(event.target.value)} aria-describedby={described} aria-invalid={problem ? true : undefined} />
      {hint ? (
        <small id={`${id}-hint`} className="hint">
          {hint}
        </small>
      ) : null}
      {problem ? (
        <small id={`${id}-error`} className="field-error">
          {problem}
        </small>
      ) : null}
    </div>
  );
}
