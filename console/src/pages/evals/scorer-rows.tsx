import { useId, useRef } from 'react';
import { fieldError } from '../../api/call.js';
import { Field, GroupMessage } from '../../ui/form.js';
import { newScorerDraft, SCORER_KINDS, SCORER_TYPES, type ScorerDraft } from './scorer-kinds.js';

/** The API takes 1 to 10 scorers an eval. */
const MOST_SCORERS = 10;

/** An eval's scorers, a row each: added, removed, each of its type with that type's fields, and the API's messages on them. */
export function ScorerRows({ drafts, onChange, error }: { drafts: ScorerDraft[]; onChange: (drafts: ScorerDraft[]) => void; error: unknown }) {
  const nextKey = useRef(Math.max(0, ...drafts.map((draft) => draft.key)) + 1);
  const id = useId();
  const change = (key: number, patch: Partial<ScorerDraft>) => onChange(drafts.map((draft) => (draft.key === key ? { ...draft, ...patch } : draft)));
  const add = () => {
    onChange([...drafts, newScorerDraft(nextKey.current)]);
    nextKey.current += 1;
  };
  return (
    <fieldset className="scorers" aria-describedby={fieldError(error, 'scorers') ? `${id}-error` : undefined}>
      <legend>Scorers</legend>
      <p className="hint">Each item's output is scored by every one; an item passes when its run completed and every scorer passed.</p>
      {drafts.map((draft, index) => (
        <ScorerRow key={draft.key} index={index} draft={draft} error={error} change={(patch) => change(draft.key, patch)} onRemove={drafts.length > 1 ? () => onChange(drafts.filter((kept) => kept.key !== draft.key)) : undefined} />
      ))}
      <GroupMessage id={`${id}-error`} field="scorers" error={error} />
      <button type="button" className="secondary" onClick={add} disabled={drafts.length >= MOST_SCORERS}>
        Add a scorer
      </button>
    </fieldset>
  );
}

function ScorerRow({ index, draft, error, change, onRemove }: { index: number; draft: ScorerDraft; error: unknown; change: (patch: Partial<ScorerDraft>) => void; onRemove: (() => void) | undefined }) {
  const id = useId();
  const field = `scorers[${index}]`;
  const kind = SCORER_KINDS[draft.type];
  const legend = `Scorer ${index + 1}`;
  return (
    <fieldset className="scorer-row" aria-describedby={fieldError(error, field) ? `${id}-error` : undefined}>
      <legend>{legend}</legend>
      <GroupMessage id={`${id}-error`} field={field} error={error} />
      <div className="scorer-row-head">
        <Field label="Type" field={`${field}.type`} error={error} hint={kind.checks}>
          <select value={draft.type} onChange={(event) => change({ type: SCORER_TYPES.find((type) => type === event.target.value) ?? draft.type })}>
            {SCORER_TYPES.map((type) => (
              <option key={type} value={type}>
                {SCORER_KINDS[type].label}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Name (optional)" field={`${field}.name`} error={error} hint="How results name it; empty: its type. Unique within the eval.">
          <input value={draft.name} onChange={(event) => change({ name: event.target.value })} />
        </Field>
      </div>
      <kind.Fields draft={draft} field={field} error={error} change={change} />
      {onRemove ? (
        <div className="form-actions">
          <button type="button" className="secondary" onClick={onRemove} aria-label={`Remove scorer ${index + 1}`}>
            Remove
          </button>
        </div>
      ) : null}
    </fieldset>
  );
}
