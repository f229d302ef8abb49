import type { CreatedWebhook, RequestBody } from '@agent-platform/client';
import { useMutation } from '@tanstack/react-query';
import { getRouteApi, Link, useNavigate } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { call } from '../../api/call.js';
import { useClient, useInvalidate, useTenantQuery } from '../../api/session-context.js';
import { Empty, ErrorNotice, QueryState } from '../../ui/feedback.js';
import { Field } from '../../ui/form.js';
import { Page, Pager, Time } from '../../ui/page.js';
import { OneTimeSecret } from '../settings/one-time-secret.js';
import { parseMetadata, WebhookFields, webhookFormText, type WebhookFormText } from './webhook-fields.js';
import { EventNames } from './event-names.js';
import './webhooks.css';
import { ScrollTable } from '../settings/scroll-table.js';

const PER_PAGE = 20;
const route = getRouteApi('/app/webhooks');

export function WebhooksPage() {
  const { page = 1 } = route.useSearch();
  const navigate = useNavigate();
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<CreatedWebhook>();
  const webhooks = useTenantQuery(['webhooks', 'list', page], (client) => call(client.GET('/api/v1/webhooks', { params: { query: { page, per_page: PER_PAGE } } })));
  return (
    <Page
      title="Webhooks"
      actions={
        <button
          type="button"
          disabled={creating}
          onClick={() => {
            setCreated(undefined);
            setCreating(true);
          }}
        >
          New webhook
        </button>
      }
    >
      {created ? (
        <OneTimeSecret title="Webhook created" label="Signing secret" secret={created.signing_secret} onDismiss={() => setCreated(undefined)}>
          <p>
            Deliveries to <span className="webhook-url">{created.url}</span> are signed with it (the <code>x-service-signature</code> and <code>webhook-signature</code> headers).{' '}
            <Link to="/webhooks/$webhookId" params={{ webhookId: created.id }} search={{}}>
              Open the webhook
            </Link>{' '}
            to send a test event.
          </p>
        </OneTimeSecret>
      ) : null}
      {creating ? (
        <CreateWebhook
          onCreated={(webhook) => {
            setCreating(false);
            setCreated(webhook);
          }}
          onCancel={() => setCreating(false)}
        />
      ) : null}
      <QueryState query={webhooks} loadingLabel="Loading webhooks…">
        {(list) =>
          list.items.length === 0 ? (
            <Empty title="No webhooks yet">
              <p>A webhook sends signed notifications of the events you choose (an agent's reply, a workflow that failed, low credits) to your own endpoint.</p>
            </Empty>
          ) : (
            <>
              <ScrollTable label="Webhook list">
                <table>
                  <thead>
                    <tr>
                      <th scope="col">Endpoint</th>
                      <th scope="col">Events</th>
                      <th scope="col">Status</th>
                      <th scope="col">Created</th>
                    </tr>
                  </thead>
                  <tbody>
                    {list.items.map((webhook) => (
                      <tr key={webhook.id}>
                        <td>
                          <Link to="/webhooks/$webhookId" params={{ webhookId: webhook.id }} search={{}} className="webhook-url">
                            {webhook.url}
                          </Link>
                          {webhook.description ? <div className="muted">{webhook.description}</div> : null}
                        </td>
                        <td>
                          <EventNames events={webhook.events} />
                        </td>
                        <td>
                          <span className={`badge badge-${webhook.status}`}>{webhook.status}</span>
                        </td>
                        <td>
                          <Time value={webhook.created_at} />
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </ScrollTable>
              <Pager page={page} perPage={PER_PAGE} total={list.total} onPage={(next) => void navigate({ to: '/webhooks', search: { page: next } })} />
            </>
          )
        }
      </QueryState>
    </Page>
  );
}

type NewWebhook = RequestBody<'/api/v1/webhooks', 'post'>;

function CreateWebhook({ onCreated, onCancel }: { onCreated: (webhook: CreatedWebhook) => void; onCancel: () => void }) {
  const client = useClient();
  const invalidate = useInvalidate();
  const mutation = useMutation({
    mutationFn: ({ text, secret }: { text: WebhookFormText; secret: string }) => {
      const metadata = parseMetadata(text.metadata);
      const body: NewWebhook = {
        url: text.url,
        events: text.events,
        ...(text.description.trim() ? { description: text.description.trim() } : {}),
        ...(metadata ? { metadata } : {}),
        ...(secret ? { secret } : {}),
      };
      return call(client.POST('/api/v1/webhooks', { body }));
    },
    onSuccess: async (webhook) => {
      await invalidate('webhooks');
      onCreated(webhook);
    },
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = event.currentTarget;
    const secret = new FormData(form).get('secret');
    mutation.mutate({ text: webhookFormText(form), secret: typeof secret === 'string' ? secret : '' });
  };
  return (
    <form className="card" onSubmit={submit} aria-labelledby="new-webhook-title" noValidate>
      <h2 id="new-webhook-title">New webhook</h2>
      <ErrorNotice error={mutation.error} title="Could not create the webhook" />
      <WebhookFields error={mutation.error} />
      <Field label="Signing secret (optional)" field="secret" error={mutation.error} hint="16 to 128 printable characters of your own; leave empty and the platform generates one (whsec_…).">
        <input name="secret" autoComplete="off" spellCheck={false} />
      </Field>
      <div className="form-actions">
        <button type="submit" disabled={mutation.isPending}>
          {mutation.isPending ? 'Creating…' : 'Create webhook'}
        </button>
        <button type="button" className="secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
