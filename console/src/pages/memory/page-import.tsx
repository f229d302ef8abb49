import { useMutation } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { useId, useState, type FormEvent } from 'react';
import { call } from '../../api/call.js';
import { localValidationError } from '../../api/local-errors.js';
import { useClient, useInvalidate } from '../../api/session-context.js';
import { ErrorNotice } from '../../ui/feedback.js';
import { Field, formValues } from '../../ui/form.js';
import { FormActions } from '../../ui/form-actions.js';
import { documentName, REFRESH_CHOICES } from './document-facts.js';

/** The refresh select's value for a number of seconds typed in. */
const OTHER = 'other';

/** The refresh interval chosen: one of REFRESH_CHOICES, or the seconds typed; what is not a number is refused before sending, the range is the API's to check. */
function refreshSeconds(choice: string, typed: string): number | undefined {
  if (choice !== OTHER) return choice === '' ? undefined : Number(choice);
  const seconds = Number(typed);
  if (typed.trim() === '' || !Number.isInteger(seconds)) throw localValidationError('refresh_seconds', 'must be a whole number of seconds, from 60 to 2,592,000');
  return seconds;
}

/**
 * A web page into the agent's memory: fetched in the background through the platform's outbound
 * guard, reduced to its main text, and fetched again at the interval chosen.
 */
export function PageImport({ agentId }: { agentId: string }) {
  const client = useClient();
  const invalidate = useInvalidate();
  const titleId = useId();
  const [refresh, setRefresh] = useState('');
  // Keyed by each import, so the form starts empty again after one.
  const [formKey, setFormKey] = useState(0);
  const mutation = useMutation({
    mutationFn: ({ url, title, choice, typed }: { url: string; title: string; choice: string; typed: string }) => {
      const seconds = refreshSeconds(choice, typed);
      return call(client.POST('/api/v1/memory/documents', { body: { agent_id: agentId, url, ...(title ? { title } : {}), ...(seconds === undefined ? {} : { refresh_seconds: seconds }) } }));
    },
    onSuccess: async () => {
      setFormKey((key) => key + 1);
      setRefresh('');
      await invalidate('memory');
    },
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const { url = '', title = '', refresh: choice = '', seconds = '' } = formValues(event.currentTarget);
    mutation.mutate({ url: url.trim(), title: title.trim(), choice, typed: seconds });
  };
  return (
    <form key={formKey} className="card page-import" onSubmit={submit} aria-labelledby={titleId} noValidate>
      <h2 id={titleId}>Import a web page</h2>
      <ErrorNotice error={mutation.error} title="Could not import the page" />
      <Field label="Address" field="url" error={mutation.error} hint="An http or https address; only the page's main text is kept (no navigation, header or footer).">
        <input name="url" type="url" inputMode="url" autoComplete="off" placeholder="https://example.com/help/returns" />
      </Field>
      <Field label="Title (optional)" field="title" error={mutation.error} hint="Without one, the page's own title.">
        <input name="title" autoComplete="off" />
      </Field>
      <div className="page-import-refresh">
        <Field label="Fetch it again" hint="Its passages change only where its text did.">
          <select name="refresh" value={refresh} onChange={(event) => setRefresh(event.target.value)}>
            {REFRESH_CHOICES.map((choice) => (
              <option key={choice.label} value={choice.seconds ?? ''}>
                {choice.label}
              </option>
            ))}
            <option value={OTHER}>Every … seconds</option>
          </select>
        </Field>
        {refresh === OTHER ? (
          <Field label="Seconds between fetches" field="refresh_seconds" error={mutation.error} hint="From 60 (a minute) to 2,592,000 (30 days).">
            <input name="seconds" type="number" inputMode="numeric" min={60} max={2_592_000} step={1} />
          </Field>
        ) : null}
      </div>
      <FormActions submitLabel="Import page" pendingLabel="Importing…" pending={mutation.isPending} />
      {mutation.data ? (
        <p className="notice notice-info" role="status">
          <Link to="/memory/documents/$documentId" params={{ documentId: mutation.data.id }} search={{}}>
            {documentName(mutation.data)}
          </Link>{' '}
          is being fetched: it shows below as processing until it is read.
        </p>
      ) : null}
    </form>
  );
}
