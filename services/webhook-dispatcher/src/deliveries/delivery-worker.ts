import type { Logger } from '@agent-platform/kit';
import { restoreTraceContext } from '@agent-platform/kit/events';
import type { SecretBox } from '@agent-platform/kit/security';
import { LeasedWorkLoop } from '@agent-platform/kit/work';
import { context, metrics, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { ClaimedDelivery, ClaimedRun } from './claimed.js';
import type { DeliveryQueue } from './delivery-queue.js';
import { buildAttemptRequest, type AttemptResult, type HttpSender } from './http-sender.js';
import { signingKeys, type SigningKeys } from '../security/signing.js';
import { planAfter } from './retry-schedule.js';

export interface DeliveryWorkerOptions {
  queue: DeliveryQueue;
  sender: HttpSender;
  secrets: SecretBox;
  retryScheduleSeconds: readonly number[];
  /** Endpoints served at once in this process; each has one attempt in flight at most. */
  concurrency: number;
  /** Due deliveries of one endpoint claimed together and sent one after another. */
  runLength: number;
  /** How long a claim holds; past it, another replica may take the endpoint over. */
  leaseMs: number;
  /**
   * A run starts another attempt only this long after its claim at most, so that attempt (bounded
   * by the sender's time-out) and its record still fit in the lease.
   */
  runWindowMs: number;
  /** Attempts of a run sent ahead of their confirmed records; a crash re-sends at most this many more per endpoint. */
  maxUnrecorded: number;
  /** How often to look for work this process was not told about (other replicas' events, retries coming due). */
  pollIntervalMs: number;
  logger: Logger;
}

const tracer = trace.getTracer('@agent-platform/webhook-dispatcher');
const meter = metrics.getMeter('@agent-platform/webhook-dispatcher');
const attempts = meter.createCounter('webhook.delivery.attempts', {
  unit: '{attempt}',
  description: 'Delivery attempts made, by outcome (delivered, failed) and response status class.',
});
const attemptDuration = meter.createHistogram('webhook.delivery.attempt.duration', {
  unit: 's',
  description: 'Duration of delivery attempts, from the request to the answer or the failure.',
  advice: { explicitBucketBoundaries: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30] },
});

/** Endpoints whose opened signing keys are kept; past it the oldest are opened again when next used. */
const KEPT_SIGNING_KEYS = 10_000;

/** What a record found: all well, the endpoint changed since the claim, or the lease (or the record) lost. */
type Verdict = 'ok' | 'changed' | 'lost';

function worse(a: Verdict, b: Verdict): Verdict {
  return a === 'lost' || b === 'lost' ? 'lost' : a === 'changed' || b === 'changed' ? 'changed' : 'ok';
}

interface SentAttempt {
  startedAt: Date;
  result: AttemptResult;
}

/**
 * Sends due deliveries. Any number of replicas can run one against the same database: claims
 * are leases taken with row locks (see DeliveryQueue.claim), so none is sent twice at once and an
 * endpoint has at most one attempt in flight. A claim takes a run of an endpoint's oldest due
 * deliveries, sent in order, one at a time, with their records written behind them. All state is
 * in PostgreSQL; a worker that dies leaves leases that simply expire.
 */
export class DeliveryWorker {
  private readonly options: DeliveryWorkerOptions;
  private readonly loop: LeasedWorkLoop<ClaimedRun>;
  /** Endpoints whose run is in process here. */
  private readonly serving = new Set<string>();
  /** Each endpoint's signing keys with the sealed secret they were opened from (signingKeysOf). */
  private readonly openedKeys = new Map<string, { sealed: string; keys: SigningKeys }>();
  private stopping = false;

  constructor(options: DeliveryWorkerOptions) {
    this.options = options;
    this.loop = new LeasedWorkLoop({
      name: 'deliveries',
      claim: (limit) => options.queue.claim(limit, options.runLength, options.leaseMs),
      process: (run, signal) => this.serveTracked(run, signal),
      release: (run) => options.queue.release(run),
      concurrency: options.concurrency,
      pollIntervalMs: options.pollIntervalMs,
      logger: options.logger,
    });
  }

  start(): void {
    this.loop.start();
  }

  /**
   * Looks for due work now (new deliveries were queued, or something became due). Deliveries
   * queued only for endpoints this process is serving need no claim: each run's end claims anew,
   * after its hand-back, so what was queued meanwhile is found then. Skipping those claims spares
   * the database one that would find every endpoint leased.
   */
  wake(endpointIds?: readonly string[]): void {
    if (endpointIds?.every((id) => this.serving.has(id))) return;
    this.loop.wake();
  }

  /**
   * Stops claiming, lets runs finish the attempt in flight (handing the rest back) within
   * `graceMs`, then aborts the rest and hands their claims back unrecorded (they are sent again,
   * by whichever replica claims them).
   */
  stop(graceMs: number): Promise<void> {
    this.stopping = true;
    return this.loop.stop(graceMs);
  }

  /**
   * The run's endpoint's keys, opened once per sealed secret rather than per run: a busy endpoint is
   * claimed run after run. A rotated secret is sealed anew, and its keys replace the old ones.
   */
  private signingKeysOf(run: ClaimedRun): SigningKeys {
    const opened = this.openedKeys.get(run.webhookId);
    if (opened?.sealed === run.secretSealed) return opened.keys;
    const keys = signingKeys(this.options.secrets.open(run.secretSealed, run.webhookId));
    this.openedKeys.delete(run.webhookId);
    if (this.openedKeys.size >= KEPT_SIGNING_KEYS) this.openedKeys.delete(this.openedKeys.keys().next().value!);
    this.openedKeys.set(run.webhookId, { sealed: run.secretSealed, keys });
    return keys;
  }

  private async serveTracked(run: ClaimedRun, signal: AbortSignal): Promise<void> {
    this.serving.add(run.webhookId);
    try {
      await this.serve(run, signal);
    } finally {
      this.serving.delete(run.webhookId);
    }
  }

  /**
   * Sends the run in order, one attempt at a time. Records are written behind the sends (at most
   * `maxUnrecorded` unconfirmed), and the record that hands the endpoint back is written only once
   * every earlier one is confirmed, so a lost or failed record leaves the endpoint leased until
   * its lease expires, and the unrecorded deliveries are sent again, oldest first.
   */
  private async serve(run: ClaimedRun, signal: AbortSignal): Promise<void> {
    let keys: SigningKeys;
    try {
      keys = this.signingKeysOf(run);
    } catch (error) {
      // Our configuration is wrong, not the receiver: spend none of its attempts. The lease
      // expires and the run is tried again, hopefully with the right key by then.
      this.options.logger.error({ err: error, webhook_id: run.webhookId }, 'cannot decrypt the endpoint secret (is WEBHOOK_SECRET_KEY right?)');
      return;
    }
    const unconfirmed: Promise<Verdict>[] = [];
    let verdict: Verdict = 'ok';
    const confirmAll = async () => {
      for (const record of unconfirmed.splice(0)) verdict = worse(verdict, await record);
    };
    for (let index = 0; index < run.deliveries.length; index += 1) {
      if (index > 0 && (this.stopping || performance.now() - run.claimedAt > this.options.runWindowMs)) break;
      while (verdict === 'ok' && unconfirmed.length >= this.options.maxUnrecorded) verdict = worse(verdict, await unconfirmed.shift()!);
      if (verdict !== 'ok') break;
      const delivery = run.deliveries[index]!;
      // Each attempt continues the trace its event was fanned out in (its logs carry that trace id too).
      const traced = restoreTraceContext(delivery.trace);
      const attempt = await context.with(traced, () => this.send(run, delivery, keys, signal));
      // Stopping past the grace: the result may be the abort itself, so record nothing.
      if (signal.aborted) break;
      // A failure ends the run: whatever is due next (this delivery's retry included) is claimed afresh, oldest first.
      if (attempt.result.outcome === 'failed' || index === run.deliveries.length - 1) {
        await confirmAll();
        await context.with(traced, () => this.record(run, delivery, attempt, verdict !== 'lost'));
        return;
      }
      unconfirmed.push(context.with(traced, () => this.record(run, delivery, attempt, false)));
    }
    // Cut short (stopping, the lease's window, a changed endpoint): hand back what was not sent.
    await confirmAll();
    if (verdict !== 'lost') await this.options.queue.release(run);
  }

  /** Records an attempt; never rejects. `endRun` hands the endpoint and the run's unsent deliveries back. */
  private async record(run: ClaimedRun, delivery: ClaimedDelivery, attempt: SentAttempt, endRun: boolean): Promise<Verdict> {
    // Made only when there is something to say: most records have nothing.
    const log = () => this.options.logger.child({ delivery_id: delivery.id, webhook_id: run.webhookId, attempt: delivery.attempt });
    const { result, startedAt } = attempt;
    try {
      const plan = planAfter(result.outcome === 'delivered', this.options.retryScheduleSeconds, delivery.attempt, delivery.maxAttempts);
      const completion = await this.options.queue.complete(run, delivery, startedAt, result, plan, endRun);
      if (!completion.recorded) {
        log().warn('lease lost before the attempt was recorded; another worker owns the delivery now');
        return 'lost';
      }
      if (result.outcome === 'failed') log().info({ status: result.responseStatus, error: result.error }, 'delivery attempt failed');
      // Edited or given a new secret meanwhile: the rest is claimed afresh, as it now is.
      return completion.endpointUnchanged ? 'ok' : 'changed';
    } catch (error) {
      // Most likely the database: the leases expire and the attempt is made again (at least once).
      log().error({ err: error }, 'recording a delivery attempt failed');
      return 'lost';
    }
  }

  /**
   * The POST under a CLIENT span. The span stays ours: no `traceparent` is added to the request,
   * because the receiver is a customer's endpoint, not part of the platform, and its headers are
   * the documented contract (decisions §8).
   */
  private async send(run: ClaimedRun, delivery: ClaimedDelivery, keys: SigningKeys, signal: AbortSignal): Promise<SentAttempt> {
    const startedAt = new Date();
    const request = buildAttemptRequest({ ...delivery, url: run.url, deliveryId: delivery.id, keys, body: delivery.payload, now: startedAt });
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
    const measured = { 'webhook.delivery.outcome': result.outcome, 'http.response.status_class': result.responseStatus > 0 ? `${Math.floor(result.responseStatus / 100)}xx` : 'none' };
    attempts.add(1, measured);
    attemptDuration.record(result.responseTimeMs / 1000, measured);
    if (result.responseStatus > 0) span.setAttribute('http.response.status_code', result.responseStatus);
    if (result.outcome === 'failed') span.setStatus({ code: SpanStatusCode.ERROR, message: result.error ?? undefined });
    span.end();
    return { startedAt, result };
  }
}
