/** JSON a person can fold away: a labelled disclosure around the pretty-printed value. */
export function JsonView({ label, value, open = false }: { label: string; value: unknown; open?: boolean }) {
  return (
    <details className="json-view" open={open}>
      <summary>{label}</summary>
      <pre>{value === undefined ? '—' : JSON.stringify(value, null, 2)}</pre>
    </details>
  );
}
