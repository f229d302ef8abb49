import type { Logger } from '@agent-platform/kit';
import { restoreTraceContext } from '@agent-platform/kit/events';
import type { SecretBox } from '@agent-platform/kit/security';
import { LeasedWorkLoop } from '@agent-platform/kit/work';
import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { ClaimedDelivery, DeliveryQueue } from './delivery-queue.js';
import { buildAttemptRequest, type AttemptRequest, type AttemptResult, type HttpSender } from './http-sender.js';
import { planAfter } from './retry-schedule.js';

export interface DeliveryWorkerOptions {
  queue: DeliveryQueue;
  sender: HttpSender;
  secrets: SecretBox;
  retryScheduleSeconds: readonly number[];
  /** Attempts in flight at once in this process. */
  concurrency: number;
  /** How long a claim holds; past it, another replica may take the delivery over. */
  leaseMs: number;
  /** How often to look for work this process was not told about (other replicas' events, retries coming due). */
  pollIntervalMs: number;
  workerId: string;
  logger: Logger;
}

const tracer = trace.getTracer('@agent-platform/webhook-dispatcher');

/**
 * Sends due deliveries. Any number of replicas can run one against the same database: claims
 * are leases taken with row locks (see DeliveryQueue.claim), so none is sent twice at once and an
 * endpoint has at most one attempt in flight. All state is in PostgreSQL; a worker that dies
 * leaves leases that simply expire.
 */
export class DeliveryWorker {
  private readonly options: DeliveryWorkerOptions;
  private readonly loop: LeasedWorkLoop<ClaimedDelivery>;

  constructor(options: DeliveryWorkerOptions) {
    this.options = options;
    this.loop = new LeasedWorkLoop({
      name: 'deliveries',
      claim: (limit) => options.queue.claim(limit, options.leaseMs),
      // Each attempt continues the trace its event was fanned out in (its logs carry that trace id too).
      process: (delivery, signal) => context.with(restoreTraceContext(delivery.trace), () => this.attempt(delivery, signal)),
      release: (delivery) => options.queue.release(delivery),
      concurrency: options.concurrency,
      pollIntervalMs: options.pollIntervalMs,
      logger: options.logger,
    });
  }

  start(): void {
    this.loop.start();
  }

  /** Looks for due work now (new deliveries were queued, or a slot came free). */
  wake(): void {
    this.loop.wake();
  }

  /**
   * Stops claiming, gives attempts in flight `graceMs` to finish, then aborts the rest and hands
   * their claims back unrecorded (they are sent again, by whichever replica claims them).
   */
  stop(graceMs: number): Promise<void> {
    return this.loop.stop(graceMs);
  }

  private async attempt(delivery: ClaimedDelivery, signal: AbortSignal): Promise<void> {
    const log = this.options.logger.child({ delivery_id: delivery.id, webhook_id: delivery.webhookId, attempt: delivery.attempt });
    let secret: string;
    try {
      secret = this.options.secrets.open(delivery.secretSealed, delivery.webhookId);
    } catch (error) {
      // Our configuration is wrong, not the receiver: spend none of its attempts. The lease
      // expires and the delivery is tried again, hopefully with the right key by then.
      log.error({ err: error }, 'cannot decrypt the endpoint secret (is WEBHOOK_SECRET_KEY right?)');
      return;
    }
    try {
      const startedAt = new Date();
      const request = buildAttemptRequest({ ...delivery, deliveryId: delivery.id, secret, body: delivery.payload, now: startedAt });
      const result = await this.send(request, delivery, signal);
      if (signal.aborted) {
        // Stopping past the grace: the result may be the abort itself, so record nothing.
        await this.options.queue.release(delivery);
        return;
      }
      const plan = planAfter(result.outcome === 'delivered', this.options.retryScheduleSeconds, delivery.attempt, delivery.maxAttempts);
      const recorded = await this.options.queue.complete(delivery, startedAt, result, plan, this.options.workerId);
      if (!recorded) log.warn('lease lost before the attempt was recorded; another worker owns the delivery now');
      else if (result.outcome === 'failed') log.info({ status: result.responseStatus, error: result.error }, 'delivery attempt failed');
    } catch (error) {
      // Most likely the database: the lease expires and the attempt is made again (at least once).
      log.error({ err: error }, 'recording a delivery attempt failed');
    }
  }

  /**
   * The POST under a CLIENT span. The span stays ours: no `traceparent` is added to the request,
   * because the receiver is a customer's endpoint, not part of the platform, and its headers are
   * the documented contract (decisions §8).
   */
  private async send(request: AttemptRequest, delivery: ClaimedDelivery, signal: AbortSignal): Promise<AttemptResult> {
    const span = tracer.startSpan('POST', {
      kind: SpanKind.CLIENT,
      attributes: {
        'http.request.method': 'POST',
        'server.address': URL.parse(request.url)?.hostname ?? '',
        'webhook.delivery.id': delivery.id,
        'webhook.delivery.attempt': delivery.attempt,
      },
    });
    const result = await this.options.sender.send(request, signal);
    if (result.responseStatus > 0) span.setAttribute('http.response.status_code', result.responseStatus);
    if (result.outcome === 'failed') span.setStatus({ code: SpanStatusCode.ERROR, message: result.error ?? undefined });
    span.end();
    return result;
  }
}

