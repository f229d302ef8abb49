import { WEBHOOK_EVENT_TYPES, type CreatedWebhook, type Webhook } from '@agent-platform/client';
import { useMutation } from '@tanstack/react-query';
import { getRouteApi, Link, useNavigate } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { call } from '../../api/call.js';
import { checkedValue } from '../../api/local-errors.js';
import { useClient, useInvalidate, useTenantQuery } from '../../api/session-context.js';
import { ErrorNotice, QueryState } from '../../ui/feedback.js';
import { ConfirmButton } from '../../ui/confirm-button.js';
import { Field } from '../../ui/form.js';
import { FormActions } from '../../ui/form-actions.js';
import { Options } from '../../ui/options.js';
import { JsonText } from '../../ui/json-view.js';
import { OneTimeSecret } from '../../ui/one-time-secret.js';
import { Page, Time } from '../../ui/page.js';
import { DeliveryAttempts, DeliveryLog } from './delivery-log.js';
import { EventNames } from './event-names.js';
import { parseMetadata, WebhookFields, webhookFormText, type WebhookFormText } from './webhook-fields.js';
import { useWebhookRefresh } from './deliveries.js';
import './webhooks.css';

const route = getRouteApi('/app/webhooks/$webhookId');

/** A short name for a page title: the endpoint's host. */
function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

export function WebhookPage() {
  const { webhookId } = route.useParams();
  const webhook = useTenantQuery(['webhooks', webhookId], (client) => call(client.GET('/api/v1/webhooks/{webhook_id}', { params: { path: { webhook_id: webhookId } } })));
  return (
    <Page title={webhook.data ? `Webhook to ${hostOf(webhook.data.url)}` : 'Webhook'}>
      <p>
        <Link to="/webhooks">← All webhooks</Link>
      </p>
      <QueryState query={webhook} loadingLabel="Loading the webhook…">
        {(found) => <WebhookDetail webhook={found} />}
      </QueryState>
    </Page>
  );
}

function WebhookDetail({ webhook }: { webhook: Webhook }) {
  const client = useClient();
  const invalidate = useInvalidate();
  const refresh = useWebhookRefresh(webhook.id);
  const navigate = useNavigate();
  const { cursors = [], delivery } = route.useSearch();
  const [editing, setEditing] = useState(false);
  const [rotated, setRotated] = useState<CreatedWebhook>();
  const path = { params: { path: { webhook_id: webhook.id } } };
  const enable = useMutation({
    mutationFn: () => call(client.POST('/api/v1/webhooks/{webhook_id}/enable', path)),
    onSuccess: () => refresh.webhook(),
  });
  const rotate = useMutation({
    mutationFn: () => call(client.POST('/api/v1/webhooks/{webhook_id}/rotate-secret', path)),
    onSuccess: setRotated,
  });
  const remove = useMutation({
    mutationFn: () => call(client.DELETE('/api/v1/webhooks/{webhook_id}', path)),
    onSuccess: async () => {
      // Leave first: the page's own query would refetch a webhook that is gone.
      await navigate({ to: '/webhooks' });
      await invalidate('webhooks');
    },
  });
  const actionError = enable.error ?? rotate.error ?? remove.error;
  return (
    <>
      <div className="form-actions webhook-actions">
        <button type="button" className="secondary" onClick={() => setEditing(true)} disabled={editing}>
          Edit
        </button>
        <ConfirmButton
          label="Rotate secret"
          question="Replace the signing secret? The current one stops verifying deliveries at once."
          confirmLabel="Rotate now"
          pending={rotate.isPending}
          onConfirm={() => rotate.mutate()}
        />
        <ConfirmButton
          label="Delete"
          accessibleLabel="Delete webhook"
          question="Delete this webhook? Deliveries still pending to it are dropped."
          confirmLabel="Delete webhook"
          pending={remove.isPending}
          onConfirm={() => remove.mutate()}
        />
      </div>
      <ErrorNotice error={actionError} title={enable.error ? 'Could not re-enable the webhook' : rotate.error ? 'Could not rotate the secret' : 'Could not delete the webhook'} />
      {webhook.status !== 'active' ? (
        <div className="notice notice-warn">
          <strong>Deliveries are stopped.</strong>
          <p>A delivery failed every attempt, so nothing more is sent to this endpoint. Fix the receiver, then re-enable it; replay the deliveries it missed from the log below.</p>
          <div className="form-actions">
            <button type="button" onClick={() => enable.mutate()} disabled={enable.isPending}>
              {enable.isPending ? 'Re-enabling…' : 'Re-enable'}
            </button>
          </div>
        </div>
      ) : null}
      {rotated ? (
        <OneTimeSecret title="New signing secret" label="Signing secret" secret={rotated.signing_secret} onDismiss={() => setRotated(undefined)}>
          <p>Deliveries from now on are signed with this secret only: update your receiver.</p>
        </OneTimeSecret>
      ) : null}
      {editing ? <EditWebhook webhook={webhook} onDone={() => setEditing(false)} /> : null}
      <dl className="facts">
        <dt>Endpoint</dt>
        <dd className="webhook-url">{webhook.url}</dd>
        <dt>Status</dt>
        <dd>
          <span className={`badge badge-${webhook.status}`}>{webhook.status}</span>
        </dd>
        <dt>Events</dt>
        <dd>
          <EventNames events={webhook.events} />
        </dd>
        <dt>Description</dt>
        <dd>{webhook.description || <span className="muted">—</span>}</dd>
        <dt>Metadata</dt>
        <dd>{Object.keys(webhook.metadata).length > 0 ? <JsonText value={webhook.metadata} /> : <span className="muted">—</span>}</dd>
        <dt>Created</dt>
        <dd>
          <Time value={webhook.created_at} />
        </dd>
        <dt>Updated</dt>
        <dd>
          <Time value={webhook.updated_at} />
        </dd>
      </dl>
      <TestWebhook webhook={webhook} />
      <DeliveryLog webhookId={webhook.id} cursors={cursors} selected={delivery} />
      {delivery ? <DeliveryAttempts webhookId={webhook.id} deliveryId={delivery} /> : null}
    </>
  );
}

function EditWebhook({ webhook, onDone }: { webhook: Webhook; onDone: () => void }) {
  const client = useClient();
  const refresh = useWebhookRefresh(webhook.id);
  const invalidate = useInvalidate();
  const mutation = useMutation({
    mutationFn: (text: WebhookFormText) =>
      call(
        client.PATCH('/api/v1/webhooks/{webhook_id}', {
          params: { path: { webhook_id: webhook.id } },
          // Events and metadata replace the whole of what was there.
          body: { url: text.url, events: text.events, description: text.description.trim(), metadata: checkedValue(parseMetadata(text.metadata)) ?? {} },
        }),
      ),
    onSuccess: async () => {
      await refresh.webhook();
      // The list shows url, events and status too; it refetches when next shown.
      void invalidate('webhooks');
      onDone();
    },
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    mutation.mutate(webhookFormText(event.currentTarget));
  };
  return (
    <form className="card" onSubmit={submit} aria-labelledby="edit-webhook-title" noValidate>
      <h2 id="edit-webhook-title">Edit webhook</h2>
      <ErrorNotice error={mutation.error} title="Could not save the webhook" />
      <WebhookFields error={mutation.error} initial={webhook} />
      <FormActions submitLabel="Save changes" pendingLabel="Saving…" pending={mutation.isPending} onCancel={onDone} />
    </form>
  );
}

/** The catalogue type a test sends by default: the first the endpoint subscribes to. */
function defaultTestType(webhook: Webhook): string {
  return WEBHOOK_EVENT_TYPES.find((type) => webhook.events.includes(type)) ?? WEBHOOK_EVENT_TYPES[0];
}

function TestWebhook({ webhook }: { webhook: Webhook }) {
  const client = useClient();
  const refresh = useWebhookRefresh(webhook.id);
  const mutation = useMutation({
    mutationFn: (eventType: string) => call(client.POST('/api/v1/webhooks/{webhook_id}/test', { params: { path: { webhook_id: webhook.id } }, body: { event_type: eventType } })),
    // The test is in the delivery log too.
    onSuccess: () => refresh.deliveries(),
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const eventType = new FormData(event.currentTarget).get('event_type');
    mutation.mutate(typeof eventType === 'string' ? eventType : defaultTestType(webhook));
  };
  const outcome = mutation.data;
  return (
    <form className="card" onSubmit={submit} aria-labelledby="test-webhook-title">
      <h2 id="test-webhook-title">Send a test event</h2>
      <p className="muted">One synthetic event, sent now and once (no retries), signed like any other.</p>
      <ErrorNotice error={mutation.error} title="Could not send the test" />
      <div className="test-form">
        <Field label="Event type" field="event_type" error={mutation.error}>
          <select name="event_type" defaultValue={defaultTestType(webhook)}>
            <Options values={WEBHOOK_EVENT_TYPES} />
          </select>
        </Field>
        <button type="submit" disabled={mutation.isPending}>
          {mutation.isPending ? 'Sending…' : 'Send test'}
        </button>
      </div>
      <div role="status" aria-live="polite">
        {outcome ? (
          <div className={`notice ${outcome.success ? 'notice-info' : 'notice-error'} test-outcome`}>
            <strong>{outcome.success ? 'Test delivered' : 'Test not delivered'}</strong>
            <p>
              {outcome.response_status === null ? 'No HTTP response arrived' : `The receiver answered ${outcome.response_status}`} after {outcome.response_time_ms} ms
              {outcome.error ? `: ${outcome.error}` : '.'}{' '}
              <Link to="/webhooks/$webhookId" params={{ webhookId: webhook.id }} search={(previous) => ({ ...previous, delivery: outcome.delivery_id })}>
                See the delivery
              </Link>
            </p>
          </div>
        ) : null}
      </div>
    </form>
  );
}
