import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { IN_PROCESS_DRAIN, type Drain, type Logger } from '@agent-platform/kit';
import { assembleOnDatabase, classifyDbError, closeOrm, requestContext, type Orm } from '@agent-platform/kit/db';
import { EVENT_SUBJECT_PREFIX, type EventBus, type Subscription } from '@agent-platform/kit/events';
import { GrpcServer, type InProcessServing } from '@agent-platform/kit/grpc';
import { observeBacklog } from '@agent-platform/kit/telemetry';
import { WebhookServiceService } from '@agent-platform/proto/webhooks/v1';
import type { WebhookDispatcherConfig } from './config.js';
import { openDatabase } from './database.js';
import { deliveryHandlers } from './deliveries/deliveries.grpc.js';
import { DeliveriesRepository } from './deliveries/deliveries.repository.js';
import { DeliveriesService } from './deliveries/deliveries.service.js';
import { DeliveryQueue } from './deliveries/delivery-queue.js';
import { DeliveryWorker } from './deliveries/delivery-worker.js';
import { fanOutHandlers } from './deliveries/fan-out.js';
import { HttpSender } from './deliveries/http-sender.js';
import { OutboundPolicy, SecretBox, type HostResolver } from '@agent-platform/kit/security';
import { WEBHOOK_SERVICE_NAME, webhookHandlers } from './webhooks/webhooks.grpc.js';
import { WebhooksRepository } from './webhooks/webhooks.repository.js';
import { WebhooksService } from './webhooks/webhooks.service.js';

export { loadWebhookDispatcherConfig, type WebhookDispatcherConfig } from './config.js';
/** The schema's migrations, and the connection that applies them (test templates clone the result). */
export { migrations, openDatabase } from './database.js';

/** The durable consumer every replica shares: each event is fanned out by one of them. */
export const CONSUMER_NAME = 'webhook-dispatcher';

export interface WebhookDispatcherService extends InProcessServing {
  start(): Promise<{ port: number }>;
  /** Drains (decisions §18.3); the all-in-one launcher's quick drain when none is given. */
  stop(drain?: Drain): Promise<void>;
}

export interface WebhookDispatcherDeps {
  logger: Logger;
  /** Owned by the caller, who closes it after stop(). */
  bus: EventBus;
  /** Resolves endpoint host names for the SSRF guard and for connecting; default the system's. */
  resolveHost?: HostResolver;
  /** First token of event subjects; default `events`. Tests sharing a NATS server use their own. */
  subjectPrefix?: string;
}

// Fan-out is one short transaction per event; the handler keeps each tenant's events in order.
const FAN_OUT_CONCURRENCY = 8;
// A claim outlives the attempt's time-out by this much, room to record the outcome.
const LEASE_MARGIN_MS = 5_000;
// Deliveries of one endpoint claimed at once and sent in order: one claim per run, not per delivery.
const RUN_LENGTH = 50;
// A run starts attempts only this long after its claim, so the last one still ends (time-out) with
// half the margin left to record it.
const RUN_WINDOW_MS = LEASE_MARGIN_MS / 2;
// Sends of a run ahead of their records: the records' round trips overlap the next sends.
const MAX_UNRECORDED = 8;
const POLL_INTERVAL_MS = 250;
// Bounds on shutdown: attempts in flight, then calls in flight, then the pool.
const DB_CLOSE_TIMEOUT_MS = 5_000;

/**
 * The composition root: connects the database (applying migrations), wires repositories,
 * services, the delivery worker and the event consumer with plain constructors. The local
 * all-in-one launcher and the tests call this too.
 */
export async function buildWebhookDispatcherService(config: WebhookDispatcherConfig, deps: WebhookDispatcherDeps): Promise<WebhookDispatcherService> {
  return assembleOnDatabase(openDatabase(config.databaseUrl, deps.logger), (orm) => assemble(config, deps, orm));
}

function assemble(config: WebhookDispatcherConfig, deps: WebhookDispatcherDeps, orm: Orm): WebhookDispatcherService {
  const { logger } = deps;
  const em = orm.em;
  const workerId = `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
  const secrets = new SecretBox([config.secretKey]);
  const policy = new OutboundPolicy({ allowPrivateNetworks: config.allowPrivateNetworkUrls, ...(deps.resolveHost ? { resolve: deps.resolveHost } : {}) });
  const sender = new HttpSender({ policy, timeoutMs: config.timeoutMs });
  const queue = new DeliveryQueue(em, { workerId });
  const webhooks = new WebhooksRepository(em);

  const worker = new DeliveryWorker({
    queue,
    sender,
    secrets,
    retryScheduleSeconds: config.retryScheduleSeconds,
    concurrency: config.deliveryConcurrency,
    runLength: RUN_LENGTH,
    leaseMs: config.timeoutMs + LEASE_MARGIN_MS,
    runWindowMs: RUN_WINDOW_MS,
    maxUnrecorded: MAX_UNRECORDED,
    pollIntervalMs: POLL_INTERVAL_MS,
    logger: logger.child({ component: 'delivery-worker' }),
  });
  const wake = (endpointIds?: readonly string[]) => worker.wake(endpointIds);
  const webhooksService = new WebhooksService({ webhooks, secrets, policy });
  const deliveriesService = new DeliveriesService({ deliveries: new DeliveriesRepository(em), webhooks, secrets, sender, wake, workerId });
  const fanOut = fanOutHandlers({ queue, retryScheduleSeconds: config.retryScheduleSeconds, wake, logger });

  const around = requestContext(orm);
  const server = new GrpcServer({ logger, around, classifyError: classifyDbError }).add(WEBHOOK_SERVICE_NAME, WebhookServiceService, {
    ...webhookHandlers(webhooksService),
    ...deliveryHandlers(deliveriesService),
  });

  let listening = false;
  let subscription: Subscription | undefined;
  let unobserveBacklog: (() => void) | undefined;
  return {
    inProcess: server.inProcess(),
    async start() {
      const port = await server.listen(config.grpcHost, config.grpcPort);
      listening = true;
      subscription = await deps.bus.subscribe({
        name: CONSUMER_NAME,
        filter: `${deps.subjectPrefix ?? EVENT_SUBJECT_PREFIX}.>`,
        concurrency: FAN_OUT_CONCURRENCY,
        ...fanOut,
      });
      worker.start();
      unobserveBacklog = observeBacklog('@agent-platform/webhook-dispatcher', 'webhook.deliveries.backlog', 'Deliveries due now to active endpoints.', () => queue.backlog());
      logger.info({ host: config.grpcHost, port, worker_id: workerId }, 'webhook dispatcher listening');
      return { port };
    },
    async stop(drain = IN_PROCESS_DRAIN) {
      unobserveBacklog?.();
      // All at once, each within the grace: GOAWAY to callers (they move to the other replicas), no
      // new deliveries claimed while those in flight finish, no more events taken from the stream.
      await Promise.all([
        listening ? server.stop(drain.graceMs) : undefined,
        worker.stop(drain.graceMs),
        subscription?.stop(),
      ]);
      subscription = undefined;
      listening = false;
      sender.close();
      if (!(await closeOrm(orm, DB_CLOSE_TIMEOUT_MS))) logger.warn('database pool did not close in time');
    },
  };
}
