import { useMutation } from '@tanstack/react-query';
import { useMemo, useState, type FormEvent } from 'react';
import { call, describeError } from '../../api/call.js';
import { useClient, useInvalidate } from '../../api/session-context.js';
import { ChoiceFieldset } from '../../ui/choice-fieldset.js';
import { ErrorNotice } from '../../ui/feedback.js';
import { Field } from '../../ui/form.js';
import { FormActions } from '../../ui/form-actions.js';
import { useShowsField } from '../../ui/shown-fields.js';
import { batches, CSV_COLUMNS, formatOfFile, parseImport, remainingText, type ImportFormat, type NewItem } from './item-import.js';

const FORMATS: readonly { value: ImportFormat; label: string; example: string }[] = [
  { value: 'csv', label: `CSV: a header row naming ${CSV_COLUMNS.join(', ')}`, example: 'message,expected,user_id\n"Can I get a refund after 40 days?","No: refunds are within 30 days.",customer-8812' },
  { value: 'jsonl', label: 'JSONL: one item object a line', example: '{"input": {"message": "How do I return a gift?"}, "expected": "Use the gift receipt.", "metadata": {"topic": "returns"}}' },
];
/** More mistakes than this are counted, not listed. */
const ERRORS_LISTED = 100;

/** A batch the API refused (all of it unstored) after `sent` items had been stored. */
class BatchRefused extends Error {
  constructor(
    readonly refusal: unknown,
    readonly sent: number,
  ) {
    super('A batch was refused');
  }
}

/** The position in the refused batch a field of the API's message names (`items[3].input.message` → 3). */
function itemIndex(field: string): number | undefined {
  const match = /^items\[(\d+)\]/.exec(field);
  return match ? Number(match[1]) : undefined;
}

/**
 * Many items at once, pasted or from a file, read here first: each line's mistake is listed, and
 * nothing is sent until there are none. They go in batches (at most 1,000, each stored all or
 * none); when one is refused, the items stored before it leave the box and the API's messages are
 * shown on the lines of the batch it refused.
 */
export function BulkAdd({ datasetId, onDone }: { datasetId: string; onDone: () => void }) {
  const client = useClient();
  const invalidate = useInvalidate();
  const [format, setFormat] = useState<ImportFormat>('csv');
  const [text, setText] = useState('');
  const [progress, setProgress] = useState<{ sent: number; total: number } | undefined>(undefined);
  const parsed = useMemo(() => parseImport(text, format), [text, format]);
  const items = useMemo(() => parsed.entries.flatMap((entry) => (entry.item ? [entry.item] : [])), [parsed]);
  const batchCount = useMemo(() => batches(items).length, [items]);
  const mistakes = [...(parsed.problem ? [parsed.problem] : []), ...parsed.entries.flatMap((entry) => (entry.error ? [{ line: entry.line, message: entry.error }] : []))];
  const mutation = useMutation({
    mutationFn: async (sending: NewItem[]) => {
      let sent = 0;
      for (const batch of batches(sending)) {
        setProgress({ sent, total: sending.length });
        try {
          await call(client.POST('/api/v1/datasets/{dataset_id}/items', { params: { path: { dataset_id: datasetId } }, body: { items: batch } }));
        } catch (error) {
          throw new BatchRefused(error, sent);
        }
        sent += batch.length;
      }
      return sent;
    },
    onSuccess: () => setText(''),
    onError: (error) => {
      if (error instanceof BatchRefused && error.sent > 0) setText(remainingText(parsed, error.sent));
    },
    onSettled: async () => {
      setProgress(undefined);
      await invalidate('datasets');
    },
  });
  const refusal = mutation.error instanceof BatchRefused ? mutation.error : undefined;
  const refusedFields = describeError(refusal?.refusal).fields;
  const edit = (next: string) => {
    // The API's messages were about the lines as they were.
    mutation.reset();
    setText(next);
  };
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    if (mistakes.length === 0 && items.length > 0) mutation.mutate(items);
  };
  const example = FORMATS.find((known) => known.value === format)?.example;
  return (
    <form className="card bulk-add" onSubmit={submit} aria-labelledby="bulk-add-title" noValidate>
      <h2 id="bulk-add-title">Add from CSV or JSONL</h2>
      {refusal ? (
        <>
          <ErrorNotice error={refusal.refusal} title={`The platform refused the batch from line ${parsed.entries[0]?.line ?? 1}: nothing of it was stored`} />
          {refusal.sent > 0 ? (
            <p className="notice notice-warn">
              The {refusal.sent.toLocaleString()} items before it were added, and have left the box: what it holds now is what is still to add.
            </p>
          ) : null}
        </>
      ) : null}
      {mutation.isSuccess ? (
        <p className="notice notice-info" role="status">
          Added {mutation.data === 1 ? '1 item' : `${mutation.data.toLocaleString()} items`}.
        </p>
      ) : null}
      <ChoiceFieldset legend="Format" field="format" error={undefined} className="bulk-formats">
        {FORMATS.map((choice) => (
          <label key={choice.value} className="checkbox">
            <input type="radio" name="format" value={choice.value} checked={format === choice.value} onChange={() => setFormat(choice.value)} /> {choice.label}
          </label>
        ))}
      </ChoiceFieldset>
      <Field label="Upload a file" hint="A .csv or .jsonl file: its text goes into the box below, to check before adding.">
        <input
          type="file"
          accept=".csv,.jsonl,.ndjson,text/csv"
          onChange={(event) => {
            const file = event.target.files?.[0];
            if (!file) return;
            void file.text().then((content) => {
              setFormat((current) => formatOfFile(file.name) ?? current);
              edit(content);
            });
          }}
        />
      </Field>
      <Field label="Items to add" hint={<>Or paste them here, e.g. {example ? <code className="bulk-example">{example}</code> : null}</>} message={mistakes.length > 0 ? `${mistakes.length === 1 ? 'One line needs' : `${mistakes.length} lines need`} fixing: see the list below.` : undefined}>
        <textarea className="code" rows={10} spellCheck={false} value={text} onChange={(event) => edit(event.target.value)} />
      </Field>
      <div className="bulk-summary">
        {mistakes.length > 0 ? (
          <div className="notice notice-error">
            <strong>{mistakes.length === 1 ? 'One line needs fixing' : `${mistakes.length.toLocaleString()} lines need fixing`}; nothing is sent until none does.</strong>
            <ul aria-label="Lines to fix">
              {mistakes.slice(0, ERRORS_LISTED).map((mistake) => (
                <li key={mistake.line}>
                  Line {mistake.line}: {mistake.message}
                </li>
              ))}
              {mistakes.length > ERRORS_LISTED ? <li>and {(mistakes.length - ERRORS_LISTED).toLocaleString()} more</li> : null}
            </ul>
          </div>
        ) : refusedFields.length > 0 ? (
          <ul className="notice notice-error" aria-label="Lines refused">
            {refusedFields.map((detail) => (
              <RefusedLine key={`${detail.field}:${detail.message}`} error={refusal?.refusal} field={detail.field} message={detail.message} line={parsed.entries[itemIndex(detail.field) ?? -1]?.line} />
            ))}
          </ul>
        ) : items.length > 0 ? (
          <p className="muted">
            {items.length === 1 ? '1 item' : `${items.length.toLocaleString()} items`} ready to add
            {items.length > 1 ? `, in ${batchCount === 1 ? 'one batch' : `${batchCount} batches`}` : ''}.
          </p>
        ) : null}
      </div>
      {progress ? (
        <p role="status" className="muted">
          Adding… {progress.sent.toLocaleString()} of {progress.total.toLocaleString()} sent.
        </p>
      ) : null}
      <FormActions
        submitLabel={items.length > 0 && mistakes.length === 0 ? `Add ${items.length === 1 ? '1 item' : `${items.length.toLocaleString()} items`}` : 'Add items'}
        pendingLabel="Adding…"
        pending={mutation.isPending}
        disabled={mistakes.length > 0 || items.length === 0}
        cancelLabel="Close"
        onCancel={onDone}
      />
    </form>
  );
}

/** A message of the API about one item of the refused batch, on that item's line (so the notice above leaves it out). */
function RefusedLine({ error, field, message, line }: { error: unknown; field: string; message: string; line: number | undefined }) {
  const index = itemIndex(field);
  useShowsField(error, field, line !== undefined);
  if (index === undefined || line === undefined) return null;
  return (
    <li>
      Line {line}: <code>{field.replace(/^items\[\d+\]\./, '')}</code> {message}
    </li>
  );
}
