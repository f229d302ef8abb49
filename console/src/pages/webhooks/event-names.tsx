import './webhooks.css';

/** A subscription's event types; `*` read as what it means. */
export function EventNames({ events }: { events: readonly string[] }) {
  return (
    <span className="event-names">
      {events.map((type) => (
        <code key={type}>{type === '*' ? '* (all events)' : type}</code>
      ))}
    </span>
  );
}
