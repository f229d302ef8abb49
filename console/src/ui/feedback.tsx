import type { ReactNode } from 'react';
import { describeError } from '../api/call.js';
import { useShownFields } from './shown-fields.js';

/** An API failure as a person reads it: the message, the code, and each field's own message. */
export function ErrorNotice({ error, title = 'Something went wrong' }: { error: unknown; title?: string }) {
  const shownByControls = useShownFields(error);
  if (!error) return null;
  const { message, code, fields: all } = describeError(error);
  // A field whose control shows its message is not listed here again.
  const fields = all.filter((detail) => !shownByControls.has(detail.field));
  return (
    <div role="alert" className="notice notice-error">
      <strong>{title}</strong>
      <p>
        {message}
        {code ? <code className="error-code">{code}</code> : null}
      </p>
      {all.length > fields.length ? <p>{fields.length === 0 ? 'Check the fields marked below.' : 'Check the fields marked below, and:'}</p> : null}
      {fields.length > 0 ? (
        <ul>
          {fields.map((detail) => (
            <li key={`${detail.field}:${detail.message}`}>
              <code>{detail.field}</code>: {detail.message}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

export function Loading({ label = 'Loading…' }: { label?: string }) {
  return (
    <p className="loading" role="status" aria-live="polite">
      {label}
    </p>
  );
}

/** What an empty list says, and what to do about it. */
export function Empty({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="empty">
      <p className="empty-title">{title}</p>
      {children}
    </div>
  );
}

/**
 * The three states of a query in one place: loading, its error (with a retry), or the data.
 */
export function QueryState<Data>({ query, children, loadingLabel }: { query: { isPending: boolean; error: unknown; data: Data | undefined; refetch: () => unknown }; children: (data: Data) => ReactNode; loadingLabel?: string }) {
  if (query.error) {
    return (
      <>
        <ErrorNotice error={query.error} title="Could not load this" />
        <button type="button" onClick={() => void query.refetch()}>
          Try again
        </button>
      </>
    );
  }
  if (query.isPending || query.data === undefined) return <Loading {...(loadingLabel ? { label: loadingLabel } : {})} />;
  return <>{children(query.data)}</>;
}
