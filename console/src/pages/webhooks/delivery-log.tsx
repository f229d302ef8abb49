import type { ResponseBody, WebhookDelivery } from '@agent-platform/client';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { useEffect, useRef } from 'react';
import { call } from '../../api/call.js';
import { useClient, useSession, useTenantQuery } from '../../api/session-context.js';
import { Empty, ErrorNotice, QueryState } from '../../ui/feedback.js';
import { DataTable, type Column } from '../../ui/data-table.js';
import { Time } from '../../ui/page.js';
import { pollWhilePending, useWebhookRefresh } from './deliveries.js';
import './webhooks.css';

const LIMIT = 20;

function ResponseCode({ status }: { status: number | null }) {
  return status === null ? <span className="muted">none</span> : <>{status}</>;
}

function deliveryColumns(webhookId: string, selected: string | undefined): Column<WebhookDelivery>[] {
  return [
    { header: 'Event', cell: (delivery) => <code>{delivery.event_type}</code> },
    { header: 'Status', cell: (delivery) => <span className={`badge badge-${delivery.status}`}>{delivery.status}</span> },
    { header: 'Attempts', cell: (delivery) => delivery.attempts },
    {
      header: 'Last response',
      cell: (delivery) => (
        <>
          <ResponseCode status={delivery.response_status} />
          {delivery.attempts > 0 ? <span className="muted"> in {delivery.response_time_ms} ms</span> : null}
        </>
      ),
    },
    { header: 'Created', cell: (delivery) => <Time value={delivery.created_at} /> },
    {
      header: 'Details',
      headerHidden: true,
      cell: (delivery) => (
        <Link
          to="/webhooks/$webhookId"
          params={{ webhookId }}
          search={(previous) => ({ ...previous, delivery: delivery.id })}
          aria-current={delivery.id === selected ? 'true' : undefined}
          aria-label={`Attempts of the ${delivery.event_type} delivery of ${new Date(delivery.created_at).toLocaleString()}`}
        >
          Attempts
        </Link>
      ),
    },
  ];
}

type Attempt = ResponseBody<'/api/v1/webhooks/{webhook_id}/deliveries/{delivery_id}', 'get'>['attempt_log'][number];

const ATTEMPT_COLUMNS: Column<Attempt>[] = [
  { header: '#', cell: (attempt) => attempt.number },
  { header: 'Outcome', cell: (attempt) => <span className={`badge badge-${attempt.outcome}`}>{attempt.outcome}</span> },
  { header: 'Response', cell: (attempt) => <ResponseCode status={attempt.response_status} /> },
  { header: 'Duration', cell: (attempt) => `${attempt.response_time_ms} ms` },
  { header: 'Started', cell: (attempt) => <Time value={attempt.started_at} /> },
  { header: 'Error', className: 'attempt-error', cell: (attempt) => attempt.error ?? <span className="muted">—</span> },
];

/**
 * The webhook's deliveries, newest first, a page at a time by cursor; the trail of cursors in the
 * URL lets Newer step back. Pending ones are looked at again until they are delivered or failed.
 */
export function DeliveryLog({ webhookId, cursors, selected }: { webhookId: string; cursors: string[]; selected: string | undefined }) {
  const cursor = cursors.at(-1);
  const refresh = useWebhookRefresh(webhookId);
  const deliveries = useTenantQuery(
    ['webhooks', webhookId, 'deliveries', cursor ?? 'newest'],
    (client) => call(client.GET('/api/v1/webhooks/{webhook_id}/deliveries', { params: { path: { webhook_id: webhookId }, query: { limit: LIMIT, ...(cursor ? { cursor } : {}) } } })),
    // The open delivery is watched by its own card, which refreshes this list when it changes.
    { refetchInterval: (query) => pollWhilePending(query.state.data?.items.filter((delivery) => delivery.id !== selected)) },
  );
  // A delivery that failed its last attempt fails the endpoint: the webhook's status is read again.
  const failed = deliveries.data?.items.filter((delivery) => delivery.status === 'failed').length;
  const failedBefore = useRef(failed);
  useEffect(() => {
    if (failed !== undefined && failedBefore.current !== undefined && failed > failedBefore.current) void refresh.webhook();
    failedBefore.current = failed;
  }, [failed, refresh]);
  return (
    <section aria-labelledby="deliveries-title">
      <div className="section-header">
        <h2 id="deliveries-title">Deliveries</h2>
        <button type="button" className="secondary" onClick={() => void deliveries.refetch()} disabled={deliveries.isFetching}>
          {deliveries.isFetching ? 'Refreshing…' : 'Refresh'}
        </button>
      </div>
      <QueryState query={deliveries} loadingLabel="Loading deliveries…">
        {(log) =>
          log.items.length === 0 ? (
            <Empty title={cursor ? 'No older deliveries' : 'No deliveries yet'}>
              <p>Each event this endpoint subscribes to, and each test, is logged here with every attempt to send it.</p>
            </Empty>
          ) : (
            <>
              <DataTable
                label="Delivery log"
                caption="Deliveries, newest first"
                captionHidden
                columns={deliveryColumns(webhookId, selected)}
                rows={log.items}
                rowKey={(delivery) => delivery.id}
                selected={(delivery) => delivery.id === selected}
              />
              <nav className="pager" aria-label="Delivery pages">
                {cursors.length > 0 ? (
                  <Link to="/webhooks/$webhookId" params={{ webhookId }} search={(previous) => ({ ...previous, cursors: cursors.slice(0, -1) })} className="button secondary">
                    Newer
                  </Link>
                ) : null}
                <span>
                  {log.items.length} of {log.total}
                </span>
                {log.next_cursor ? (
                  <Link to="/webhooks/$webhookId" params={{ webhookId }} search={(previous) => ({ ...previous, cursors: [...cursors, log.next_cursor ?? ''] })} className="button secondary">
                    Older
                  </Link>
                ) : null}
              </nav>
            </>
          )
        }
      </QueryState>
    </section>
  );
}

/** One delivery with every attempt to send it, and the replay that makes one more now. */
export function DeliveryAttempts({ webhookId, deliveryId }: { webhookId: string; deliveryId: string }) {
  const client = useClient();
  const refresh = useWebhookRefresh(webhookId);
  const queryClient = useQueryClient();
  const { tenantId } = useSession().state;
  const path = { params: { path: { webhook_id: webhookId, delivery_id: deliveryId } } };
  const key = ['webhooks', webhookId, 'delivery', deliveryId];
  const delivery = useTenantQuery(key, (api) => call(api.GET('/api/v1/webhooks/{webhook_id}/deliveries/{delivery_id}', path)), {
    refetchInterval: (query) => pollWhilePending(query.state.data ? [query.state.data] : undefined),
  });
  const replay = useMutation({
    mutationFn: () => call(client.POST('/api/v1/webhooks/{webhook_id}/deliveries/{delivery_id}/retry', path)),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: [tenantId, ...key] });
      await refresh.deliveries();
    },
  });
  // When this delivery moves on (an attempt made, delivered, failed), the log's row follows it.
  const progress = delivery.data ? `${delivery.data.status}:${delivery.data.attempts}` : undefined;
  const progressBefore = useRef(progress);
  useEffect(() => {
    if (progress !== undefined && progressBefore.current !== undefined && progress !== progressBefore.current) void refresh.deliveries();
    progressBefore.current = progress;
  }, [progress, refresh]);
  return (
    <section className="card delivery-card" aria-labelledby="delivery-title">
      <div className="section-header">
        <h2 id="delivery-title">
          Delivery <code>{deliveryId}</code>
        </h2>
        <Link to="/webhooks/$webhookId" params={{ webhookId }} search={(previous) => ({ ...previous, delivery: undefined })}>
          Close
        </Link>
      </div>
      <QueryState query={delivery} loadingLabel="Loading the delivery…">
        {(found) => (
          <>
            <dl className="facts">
              <dt>Event</dt>
              <dd>
                <code>{found.event_type}</code> <span className="muted">{found.event_id}</span>
              </dd>
              <dt>Status</dt>
              <dd>
                <span className={`badge badge-${found.status}`}>{found.status}</span>
              </dd>
              <dt>Attempts</dt>
              <dd>{found.attempts}</dd>
              <dt>Delivered</dt>
              <dd>
                <Time value={found.delivered_at} />
              </dd>
              <dt>Next attempt</dt>
              <dd>{found.next_attempt_at ? <Time value={found.next_attempt_at} /> : <span className="muted">none scheduled</span>}</dd>
            </dl>
            <div className="form-actions">
              <button type="button" onClick={() => replay.mutate()} disabled={replay.isPending}>
                {replay.isPending ? 'Replaying…' : 'Replay delivery'}
              </button>
            </div>
            <ErrorNotice error={replay.error} title="Could not replay the delivery" />
            {replay.isSuccess && found.status === 'pending' ? (
              <p className="muted" role="status">
                Replay accepted: the next attempt is on its way.
              </p>
            ) : null}
            <h3>Attempts</h3>
            <DataTable
              label="Attempt log"
              caption="Attempts, oldest first"
              captionHidden
              columns={ATTEMPT_COLUMNS}
              rows={found.attempt_log}
              rowKey={(attempt) => attempt.number}
              empty={<Empty title="No attempt yet" />}
            />
          </>
        )}
      </QueryState>
    </section>
  );
}
