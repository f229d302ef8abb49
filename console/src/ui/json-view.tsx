/** A value as indented JSON, or a dash when there is none. */
export function JsonText({ value }: { value: unknown }) {
  return <pre>{value === undefined ? '—' : JSON.stringify(value, null, 2)}</pre>;
}

/** JSON a person can fold away: a labelled disclosure around the pretty-printed value. */
export function JsonView({ label, value, open = false }: { label: string; value: unknown; open?: boolean }) {
  return (
    <details className="json-view" open={open}>
      <summary>{label}</summary>
      <JsonText value={value} />
    </details>
  );
}
