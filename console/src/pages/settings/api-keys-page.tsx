import type { ApiKey, CreatedApiKey, RequestBody } from '@agent-platform/client';
import { useMutation } from '@tanstack/react-query';
import { getRouteApi, useNavigate } from '@tanstack/react-router';
import type { FormEvent } from 'react';
import { call } from '../../api/call.js';
import { useClient, useInvalidate, useTenantQuery } from '../../api/session-context.js';
import { Empty, ErrorNotice } from '../../ui/feedback.js';
import { ChoiceFieldset } from '../../ui/choice-fieldset.js';
import { ConfirmButton } from '../../ui/confirm-button.js';
import { PagedTable, type Column } from '../../ui/data-table.js';
import { Field, formValues } from '../../ui/form.js';
import { FormActions, useCreateForm } from '../../ui/form-actions.js';
import { OneTimeSecret } from '../../ui/one-time-secret.js';
import { Page, Time } from '../../ui/page.js';
import { SCOPES } from './scopes.js';
import './settings.css';

const PER_PAGE = 20;
const route = getRouteApi('/app/settings/api-keys');

export function ApiKeysPage() {
  const { page = 1 } = route.useSearch();
  const navigate = useNavigate();
  const creating = useCreateForm<CreatedApiKey>();
  const keys = useTenantQuery(['api-keys', page], (client) => call(client.GET('/api/v1/auth/api-keys', { params: { query: { page, per_page: PER_PAGE } } })));
  return (
    <Page
      title="API keys"
      actions={
        <button type="button" disabled={creating.open} onClick={creating.start}>
          New API key
        </button>
      }
    >
      <p className="muted">A key lets a program call the API in this tenant. It acts with your role, narrowed to the scopes it is given.</p>
      {creating.made ? (
        <OneTimeSecret title={`API key “${creating.made.name}” created`} label="API key" secret={creating.made.key} onDismiss={creating.dismiss}>
          <p>
            Send it as <code>Authorization: Bearer &lt;key&gt;</code>. Lists show only its prefix, <code>{creating.made.key_prefix}</code>.
          </p>
        </OneTimeSecret>
      ) : null}
      {creating.open ? <CreateApiKey onCreated={creating.done} onCancel={creating.cancel} /> : null}
      <PagedTable
        query={keys}
        loadingLabel="Loading API keys…"
        page={page}
        perPage={PER_PAGE}
        onPage={(next) => void navigate({ to: '/settings/api-keys', search: { page: next } })}
        label="API key list"
        columns={API_KEY_COLUMNS}
        rowKey={(key) => key.id}
        empty={
          <Empty title="No API keys yet">
            <p>Create a key for each program that calls the API, so each can be revoked alone.</p>
          </Empty>
        }
      />
    </Page>
  );
}

const API_KEY_COLUMNS: Column<ApiKey>[] = [
  { header: 'Name', cell: (key) => key.name },
  { header: 'Key', cell: (key) => <code>{key.key_prefix}…</code> },
  { header: 'Scopes', cell: (key) => key.scopes.join(', ') },
  { header: 'Expires', cell: (key) => (key.expires_at ? <Time value={key.expires_at} /> : 'Never') },
  { header: 'Last used', cell: (key) => (key.last_used_at ? <Time value={key.last_used_at} /> : 'Never') },
  { header: 'Created', cell: (key) => <Time value={key.created_at} /> },
  { header: 'Actions', headerHidden: true, cell: (key) => <RevokeApiKey apiKey={key} /> },
];

/** Revoke, once confirmed; what went wrong is said beside it. */
function RevokeApiKey({ apiKey }: { apiKey: ApiKey }) {
  const client = useClient();
  const invalidate = useInvalidate();
  const revoke = useMutation({
    mutationFn: () => call(client.DELETE('/api/v1/auth/api-keys/{key_id}', { params: { path: { key_id: apiKey.id } } })),
    onSuccess: () => invalidate('api-keys'),
  });
  return (
    <>
      <ConfirmButton
        label="Revoke"
        accessibleLabel={`Revoke ${apiKey.name}`}
        question={`Revoke “${apiKey.name}”? Programs using it stop working at once.`}
        confirmLabel="Revoke key"
        pending={revoke.isPending}
        onConfirm={() => revoke.mutate()}
      />
      <ErrorNotice error={revoke.error} title={`Could not revoke “${apiKey.name}”`} />
    </>
  );
}

type NewApiKey = RequestBody<'/api/v1/auth/api-keys', 'post'>;

/** The end of the chosen day where the reader is: a key given a date works through that day. */
function endOfDay(date: string): string {
  return new Date(`${date}T23:59:59.999`).toISOString();
}

function CreateApiKey({ onCreated, onCancel }: { onCreated: (key: CreatedApiKey) => void; onCancel: () => void }) {
  const client = useClient();
  const invalidate = useInvalidate();
  const mutation = useMutation({
    mutationFn: (key: NewApiKey) => call(client.POST('/api/v1/auth/api-keys', { body: key })),
    onSuccess: async (key) => {
      await invalidate('api-keys');
      onCreated(key);
    },
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = event.currentTarget;
    const { name = '', expires_on } = formValues(form);
    const scopes = new FormData(form).getAll('scopes').filter((value): value is NewApiKey['scopes'][number] => typeof value === 'string');
    mutation.mutate({ name, scopes, ...(expires_on ? { expires_at: endOfDay(expires_on) } : {}) });
  };
  return (
    <form className="card" onSubmit={submit} aria-labelledby="new-api-key-title" noValidate>
      <h2 id="new-api-key-title">New API key</h2>
      <ErrorNotice error={mutation.error} title="Could not create the API key" />
      <Field label="Name" field="name" error={mutation.error} hint="Say which program uses it, e.g. CI deployments.">
        <input name="name" required autoFocus maxLength={100} />
      </Field>
      <ChoiceFieldset legend="Scopes" field="scopes" error={mutation.error} hint="What the key may do; at least one." className="scope-list">
        <label className="checkbox">
          <input type="checkbox" name="scopes" value="*" />
          <span>
            <code>*</code>
            <small>Everything your role allows</small>
          </span>
        </label>
        {SCOPES.map(({ scope, description }) => (
          <label key={scope} className="checkbox">
            <input type="checkbox" name="scopes" value={scope} />
            <span>
              <code>{scope}</code>
              <small>{description}</small>
            </span>
          </label>
        ))}
      </ChoiceFieldset>
      <Field label="Expires on" field="expires_at" error={mutation.error} hint="Optional: the key stops working after this day. Leave empty for a key that does not expire.">
        <input name="expires_on" type="date" />
      </Field>
      <FormActions submitLabel="Create API key" pendingLabel="Creating…" pending={mutation.isPending} onCancel={onCancel} />
    </form>
  );
}
