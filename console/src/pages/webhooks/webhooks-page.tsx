import type { CreatedWebhook, RequestBody, Webhook } from '@agent-platform/client';
import { useMutation } from '@tanstack/react-query';
import { getRouteApi, Link, useNavigate } from '@tanstack/react-router';
import type { FormEvent } from 'react';
import { call } from '../../api/call.js';
import { checkedValue } from '../../api/local-errors.js';
import { useClient, useInvalidate, useTenantQuery } from '../../api/session-context.js';
import { Empty, ErrorNotice } from '../../ui/feedback.js';
import { PagedTable, type Column } from '../../ui/data-table.js';
import { Field } from '../../ui/form.js';
import { FormActions, useCreateForm } from '../../ui/form-actions.js';
import { OneTimeSecret } from '../../ui/one-time-secret.js';
import { Page, Time } from '../../ui/page.js';
import { parseMetadata, WebhookFields, webhookFormText, type WebhookFormText } from './webhook-fields.js';
import { EventNames } from './event-names.js';
import './webhooks.css';

const PER_PAGE = 20;
const route = getRouteApi('/app/webhooks');

export function WebhooksPage() {
  const { page = 1 } = route.useSearch();
  const navigate = useNavigate();
  const creating = useCreateForm<CreatedWebhook>();
  const created = creating.made;
  const webhooks = useTenantQuery(['webhooks', 'list', page], (client) => call(client.GET('/api/v1/webhooks', { params: { query: { page, per_page: PER_PAGE } } })));
  return (
    <Page
      title="Webhooks"
      actions={
        <button type="button" disabled={creating.open} onClick={creating.start}>
          New webhook
        </button>
      }
    >
      {created ? (
        <OneTimeSecret title="Webhook created" label="Signing secret" secret={created.signing_secret} onDismiss={creating.dismiss}>
          <p>
            Deliveries to <span className="webhook-url">{created.url}</span> are signed with it (the <code>x-service-signature</code> and <code>webhook-signature</code> headers).{' '}
            <Link to="/webhooks/$webhookId" params={{ webhookId: created.id }} search={{}}>
              Open the webhook
            </Link>{' '}
            to send a test event.
          </p>
        </OneTimeSecret>
      ) : null}
      {creating.open ? <CreateWebhook onCreated={creating.done} onCancel={creating.cancel} /> : null}
      <PagedTable
        query={webhooks}
        loadingLabel="Loading webhooks…"
        page={page}
        perPage={PER_PAGE}
        onPage={(next) => void navigate({ to: '/webhooks', search: { page: next } })}
        label="Webhook list"
        columns={WEBHOOK_COLUMNS}
        rowKey={(webhook) => webhook.id}
        empty={
          <Empty title="No webhooks yet">
            <p>A webhook sends signed notifications of the events you choose (an agent's reply, a workflow that failed, low credits) to your own endpoint.</p>
          </Empty>
        }
      />
    </Page>
  );
}

const WEBHOOK_COLUMNS: Column<Webhook>[] = [
  {
    header: 'Endpoint',
    cell: (webhook) => (
      <>
        <Link to="/webhooks/$webhookId" params={{ webhookId: webhook.id }} search={{}} className="webhook-url">
          {webhook.url}
        </Link>
        {webhook.description ? <div className="muted">{webhook.description}</div> : null}
      </>
    ),
  },
  { header: 'Events', cell: (webhook) => <EventNames events={webhook.events} /> },
  { header: 'Status', cell: (webhook) => <span className={`badge badge-${webhook.status}`}>{webhook.status}</span> },
  { header: 'Created', cell: (webhook) => <Time value={webhook.created_at} /> },
];

type NewWebhook = RequestBody<'/api/v1/webhooks', 'post'>;

function CreateWebhook({ onCreated, onCancel }: { onCreated: (webhook: CreatedWebhook) => void; onCancel: () => void }) {
  const client = useClient();
  const invalidate = useInvalidate();
  const mutation = useMutation({
    mutationFn: ({ text, secret }: { text: WebhookFormText; secret: string }) => {
      const metadata = checkedValue(parseMetadata(text.metadata));
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
      <FormActions submitLabel="Create webhook" pendingLabel="Creating…" pending={mutation.isPending} onCancel={onCancel} />
    </form>
  );
}
