import type { Scorer } from '@agent-platform/client';
import type { ReactNode } from 'react';
import { checkedValue, parseJsonObject } from '../../api/local-errors.js';
import { Field } from '../../ui/form.js';
import { JsonField } from '../../ui/json-field.js';

export type ScorerType = Scorer['type'];

/** A scorer as its row of the form holds it: every type's fields, so changing the type loses nothing typed. */
export interface ScorerDraft {
  /** Tells the rows apart while they are added and removed. */
  key: number;
  type: ScorerType;
  name: string;
  value: string;
  caseSensitive: boolean;
  schema: string;
  rubric: string;
  threshold: string;
}

export function newScorerDraft(key: number, type: ScorerType = 'contains'): ScorerDraft {
  return { key, type, name: '', value: '', caseSensitive: false, schema: '', rubric: '', threshold: '' };
}

export interface ScorerFieldsProps {
  draft: ScorerDraft;
  /** The scorer's place in the API's terms, `scorers[1]`: each field's message is `scorers[1].value`. */
  field: string;
  error: unknown;
  change: (patch: Partial<ScorerDraft>) => void;
}

/**
 * One scorer type (decisions §16.4): what it is called in the form, what it checks, its own fields,
 * and the API's scorer made of them. A mistake found before sending (a schema that is not JSON)
 * is thrown as the API's own 422 would be, naming the field.
 */
interface ScorerKind {
  label: string;
  checks: string;
  Fields: (props: ScorerFieldsProps) => ReactNode;
  scorer: (draft: ScorerDraft, field: string) => Scorer;
}

const named = (draft: ScorerDraft) => (draft.name.trim() === '' ? {} : { name: draft.name.trim() });
const valued = (draft: ScorerDraft) => (draft.value === '' ? {} : { value: draft.value });

function TextMatchFields({ draft, field, error, change, hint }: ScorerFieldsProps & { hint: string }) {
  return (
    <>
      <Field label="Value" field={`${field}.value`} error={error} hint={hint}>
        <input value={draft.value} onChange={(event) => change({ value: event.target.value })} />
      </Field>
      <label className="checkbox">
        <input type="checkbox" checked={draft.caseSensitive} onChange={(event) => change({ caseSensitive: event.target.checked })} /> Case sensitive
      </label>
    </>
  );
}

export const SCORER_KINDS: Record<ScorerType, ScorerKind> = {
  contains: {
    label: 'Contains',
    checks: 'Passes when the output contains the value.',
    Fields: (props) => <TextMatchFields {...props} hint="Empty: each item's expected answer." />,
    scorer: (draft) => ({ type: 'contains', ...valued(draft), ...(draft.caseSensitive ? { case_sensitive: true } : {}), ...named(draft) }),
  },
  exact: {
    label: 'Exact',
    checks: 'Passes when the output, trimmed, is the value.',
    Fields: (props) => <TextMatchFields {...props} hint="Empty: each item's expected answer." />,
    scorer: (draft) => ({ type: 'exact', ...valued(draft), ...(draft.caseSensitive ? { case_sensitive: true } : {}), ...named(draft) }),
  },
  regex: {
    label: 'Regular expression',
    checks: 'Passes when the pattern matches the output.',
    Fields: ({ draft, field, error, change }) => (
      <Field label="Pattern" field={`${field}.value`} error={error} hint="RE2 syntax: no look-around or back-references. Empty: each item's expected answer as the pattern.">
        <input className="code" spellCheck={false} value={draft.value} onChange={(event) => change({ value: event.target.value })} />
      </Field>
    ),
    scorer: (draft) => ({ type: 'regex', ...valued(draft), ...named(draft) }),
  },
  json_schema: {
    label: 'JSON schema',
    checks: 'Passes when the output is one JSON document valid against the schema (draft 2020-12).',
    Fields: ({ draft, field, error, change }) => (
      <JsonField label="JSON schema" field={`${field}.schema`} error={error} rows={6} placeholder='{"type": "object", "required": ["answer"]}' value={draft.schema} onChange={(event) => change({ schema: event.target.value })} />
    ),
    scorer: (draft, field) => ({ type: 'json_schema', schema: checkedValue(parseJsonObject(draft.schema, `${field}.schema`, '{"type": "object"}')), ...named(draft) }),
  },
  llm_judge: {
    label: 'Model as judge',
    checks: "The platform's model scores the output from 0 to 1 by the rubric, and says why.",
    Fields: ({ draft, field, error, change }) => (
      <>
        <Field label="Rubric" field={`${field}.rubric`} error={error} hint="What a good answer does, for the judge.">
          <textarea rows={3} value={draft.rubric} onChange={(event) => change({ rubric: event.target.value })} />
        </Field>
        <Field label="Threshold" field={`${field}.threshold`} error={error} hint="The score it passes at, 0 to 1; empty: 0.5.">
          <input type="number" min={0} max={1} step={0.05} inputMode="decimal" value={draft.threshold} onChange={(event) => change({ threshold: event.target.value })} />
        </Field>
      </>
    ),
    scorer: (draft) => ({ type: 'llm_judge', rubric: draft.rubric, ...(draft.threshold === '' ? {} : { threshold: Number(draft.threshold) }), ...named(draft) }),
  },
};

export const SCORER_TYPES = Object.keys(SCORER_KINDS) as ScorerType[];
