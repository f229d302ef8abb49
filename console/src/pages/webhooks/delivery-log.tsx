import { useMutation, useQueryClient } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { useEffect, useRef } from 'react';
import { call } from '../../api/call.js';
import { useClient, useSession, useTenantQuery } from '../../api/session-context.js';
import { Empty, ErrorNotice, QueryState } from '../../ui/feedback.js';
import { Time } from '../../ui/page.js';
import { pollWhilePending, useWebhookRefresh } from './deliveries.js';
import './webhooks.css';
import { ScrollTable } from '../settings/scroll-table.js';

const LIMIT = 20;

function ResponseCode({ status }: { status: number | null }) {
  return status === null ? <span className="muted">none</span> : <>{status}</>;
}

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
              <ScrollTable label="Delivery log">
                <table>
                  <caption className="visually-hidden">Deliveries, newest first</caption>
                  <thead>
                    <tr>
                      <th scope="col">Event</th>
                      <th scope="col">Status</th>
                      <th scope="col">Attempts</th>
                      <th scope="col">Last response</th>
                      <th scope="col">Created</th>
                      <th scope="col">
                        <span className="visually-hidden">Details</span>
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {log.items.map((delivery) => (
                      <tr key={delivery.id} className={delivery.id === selected ? 'selected' : undefined}>
                        <td>
                          <code>{delivery.event_type}</code>
                        </td>
                        <td>
                          <span className={`badge badge-${delivery.status}`}>{delivery.status}</span>
                        </td>
                        <td>{delivery.attempts}</td>
                        <td>
                          <ResponseCode status={delivery.response_status} />
                          {delivery.attempts > 0 ? <span className="muted"> in {delivery.response_time_ms} ms</span> : null}
                        </td>
                        <td>
                          <Time value={delivery.created_at} />
                        </td>
                        <td>
                          <Link
                            to="/webhooks/$webhookId"
                            params={{ webhookId }}
                            search={(previous) => ({ ...previous, delivery: delivery.id })}
                            aria-current={delivery.id === selected ? 'true' : undefined}
                            aria-label={`Attempts of the ${delivery.event_type} delivery of ${new Date(delivery.created_at).toLocaleString()}`}
                          >
                            Attempts
                          </Link>
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </ScrollTable>
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
            {found.attempt_log.length === 0 ? (
              <Empty title="No attempt yet" />
            ) : (
              <ScrollTable label="Attempt log">
                <table>
                  <caption className="visually-hidden">Attempts, oldest first</caption>
                  <thead>
                    <tr>
                      <th scope="col">#</th>
                      <th scope="col">Outcome</th>
                      <th scope="col">Response</th>
                      <th scope="col">Duration</th>
                      <th scope="col">Started</th>
                      <th scope="col">Error</th>
                    </tr>
                  </thead>
                  <tbody>
                    {found.attempt_log.map((attempt) => (
                      <tr key={attempt.number}>
                        <td>{attempt.number}</td>
                        <td>
                          <span className={`badge badge-${attempt.outcome}`}>{attempt.outcome}</span>
                        </td>
                        <td>
                          <ResponseCode status={attempt.response_status} />
                        </td>
                        <td>{attempt.response_time_ms} ms</td>
                        <td>
                          <Time value={attempt.started_at} />
                        </td>
                        <td className="attempt-error">{attempt.error ?? <span className="muted">—</span>}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </ScrollTable>
            )}
          </>
        )}
      </QueryState>
    </section>
  );
}
