import type { ApiKey, CreatedApiKey, RequestBody } from '@agent-platform/client';
import { useMutation } from '@tanstack/react-query';
import { getRouteApi, useNavigate } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { call } from '../../api/call.js';
import { useClient, useInvalidate, useTenantQuery } from '../../api/session-context.js';
import { Empty, ErrorNotice, QueryState } from '../../ui/feedback.js';
import { Field, formValues } from '../../ui/form.js';
import { Page, Pager, Time } from '../../ui/page.js';
import { ChoiceFieldset } from './choice-fieldset.js';
import { ConfirmButton } from './confirm-button.js';
import { OneTimeSecret } from './one-time-secret.js';
import { SCOPES } from './scopes.js';
import './settings.css';
import { ScrollTable } from './scroll-table.js';

const PER_PAGE = 20;
const route = getRouteApi('/app/settings/api-keys');

export function ApiKeysPage() {
  const { page = 1 } = route.useSearch();
  const navigate = useNavigate();
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<CreatedApiKey>();
  const keys = useTenantQuery(['api-keys', page], (client) => call(client.GET('/api/v1/auth/api-keys', { params: { query: { page, per_page: PER_PAGE } } })));
  return (
    <Page
      title="API keys"
      actions={
        <button
          type="button"
          disabled={creating}
          onClick={() => {
            setCreated(undefined);
            setCreating(true);
          }}
        >
          New API key
        </button>
      }
    >
      <p className="muted">A key lets a program call the API in this tenant. It acts with your role, narrowed to the scopes it is given.</p>
      {created ? (
        <OneTimeSecret title={`API key “${created.name}” created`} label="API key" secret={created.key} onDismiss={() => setCreated(undefined)}>
          <p>
            Send it as <code>Authorization: Bearer &lt;key&gt;</code>. Lists show only its prefix, <code>{created.key_prefix}</code>.
          </p>
        </OneTimeSecret>
      ) : null}
      {creating ? (
        <CreateApiKey
          onCreated={(key) => {
            setCreating(false);
            setCreated(key);
          }}
          onCancel={() => setCreating(false)}
        />
      ) : null}
      <QueryState query={keys} loadingLabel="Loading API keys…">
        {(list) =>
          list.items.length === 0 ? (
            <Empty title="No API keys yet">
              <p>Create a key for each program that calls the API, so each can be revoked alone.</p>
            </Empty>
          ) : (
            <>
              <ScrollTable label="API key list">
                <table>
                  <thead>
                    <tr>
                      <th scope="col">Name</th>
                      <th scope="col">Key</th>
                      <th scope="col">Scopes</th>
                      <th scope="col">Expires</th>
                      <th scope="col">Last used</th>
                      <th scope="col">Created</th>
                      <th scope="col">
                        <span className="visually-hidden">Actions</span>
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {list.items.map((key) => (
                      <ApiKeyRow key={key.id} apiKey={key} />
                    ))}
                  </tbody>
                </table>
              </ScrollTable>
              <Pager page={page} perPage={PER_PAGE} total={list.total} onPage={(next) => void navigate({ to: '/settings/api-keys', search: { page: next } })} />
            </>
          )
        }
      </QueryState>
    </Page>
  );
}

function ApiKeyRow({ apiKey }: { apiKey: ApiKey }) {
  const client = useClient();
  const invalidate = useInvalidate();
  const revoke = useMutation({
    mutationFn: () => call(client.DELETE('/api/v1/auth/api-keys/{key_id}', { params: { path: { key_id: apiKey.id } } })),
    onSuccess: () => invalidate('api-keys'),
  });
  return (
    <>
      <tr>
        <td>{apiKey.name}</td>
        <td>
          <code>{apiKey.key_prefix}…</code>
        </td>
        <td>{apiKey.scopes.join(', ')}</td>
        <td>{apiKey.expires_at ? <Time value={apiKey.expires_at} /> : 'Never'}</td>
        <td>{apiKey.last_used_at ? <Time value={apiKey.last_used_at} /> : 'Never'}</td>
        <td>
          <Time value={apiKey.created_at} />
        </td>
        <td>
          <ConfirmButton
            label="Revoke"
            accessibleLabel={`Revoke ${apiKey.name}`}
            question={`Revoke “${apiKey.name}”? Programs using it stop working at once.`}
            confirmLabel="Revoke key"
            pending={revoke.isPending}
            onConfirm={() => revoke.mutate()}
          />
        </td>
      </tr>
      {revoke.error ? (
        <tr>
          <td colSpan={7}>
            <ErrorNotice error={revoke.error} title={`Could not revoke “${apiKey.name}”`} />
          </td>
        </tr>
      ) : null}
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
      <div className="form-actions">
        <button type="submit" disabled={mutation.isPending}>
          {mutation.isPending ? 'Creating…' : 'Create API key'}
        </button>
        <button type="button" className="secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
