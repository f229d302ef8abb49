import { WEBHOOK_EVENT_TYPES, type Webhook } from '@agent-platform/client';
import { useState } from 'react';
import { parseOptionalJsonObject, type Checked, type JsonObject } from '../../api/local-errors.js';
import { ChoiceFieldset } from '../../ui/choice-fieldset.js';
import { Field } from '../../ui/form.js';
import { JsonField, jsonObjectText } from '../../ui/json-field.js';
import './webhooks.css';

/** What the create and edit forms read; `metadata` is the JSON text as typed. */
export interface WebhookFormText {
  url: string;
  events: string[];
  description: string;
  metadata: string;
}

export function webhookFormText(form: HTMLFormElement): WebhookFormText {
  const data = new FormData(form);
  const text = (name: string) => {
    const value = data.get(name);
    return typeof value === 'string' ? value : '';
  };
  const events = data.getAll('events').filter((value): value is string => typeof value === 'string');
  return { url: text('url').trim(), events, description: text('description'), metadata: text('metadata') };
}

/** The metadata text as the object the API keeps, or undefined when left empty. */
export function parseMetadata(text: string): Checked<JsonObject | undefined> {
  return parseOptionalJsonObject(text, 'metadata', '{"team": "support"}');
}

/** The fields of a webhook, for creating one or editing it (`initial`). */
export function WebhookFields({ error, initial }: { error: unknown; initial?: Webhook }) {
  const [events, setEvents] = useState<ReadonlySet<string>>(() => new Set(initial?.events ?? []));
  const all = events.has('*');
  const toggle = (type: string, checked: boolean) =>
    setEvents((current) => {
      const next = new Set(current);
      if (checked) next.add(type);
      else next.delete(type);
      return next;
    });
  return (
    <>
      <Field label="Endpoint URL" field="url" error={error} hint="Where deliveries are POSTed: an https address on the public internet.">
        <input name="url" type="url" required autoFocus={!initial} defaultValue={initial?.url} placeholder="https://example.com/hooks/agent-platform" />
      </Field>
      <ChoiceFieldset legend="Events" field="events" error={error} hint="The event types sent to this endpoint; at least one." className="event-list">
        <label className="checkbox event-all">
          <input type="checkbox" name="events" value="*" checked={all} onChange={(event) => toggle('*', event.target.checked)} />
          <span>
            All events <code>*</code>, including types added later
          </span>
        </label>
        {WEBHOOK_EVENT_TYPES.map((type) => (
          <label key={type} className="checkbox">
            {/* Under "all events" each type is sent anyway: shown chosen, and not sent separately. */}
            <input type="checkbox" name="events" value={type} checked={all || events.has(type)} disabled={all} onChange={(event) => toggle(type, event.target.checked)} />
            <code>{type}</code>
          </label>
        ))}
      </ChoiceFieldset>
      <Field label="Description" field="description" error={error} hint="A note for people; not sent to the receiver.">
        <input name="description" defaultValue={initial?.description ?? ''} />
      </Field>
      <JsonField label="Metadata (JSON)" field="metadata" error={error} hint='Optional: a JSON object kept with the webhook, e.g. {"team": "support"}.' rows={3} defaultValue={initial ? jsonObjectText(initial.metadata) : ''} />
    </>
  );
}
