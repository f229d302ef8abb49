import {
  AckPolicy,
  DeliverPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  jetstream,
  jetstreamManager,
  StorageType,
  type JetStreamClient,
  type JetStreamManager,
} from '@nats-io/jetstream';
import { connect, headers, nanos, type MsgHdrs, type NatsConnection } from '@nats-io/transport-node';
import { systemClock, type Clock } from '../clock.js';
import type { Logger } from '../logger.js';
import type { EventBus, EventConsumer, OutgoingEvent, RetryBackoff, Subscription } from './bus.js';
import { EVENT_SUBJECT_PREFIX, eventSubject, type EventEnvelope } from './envelope.js';
import { NatsSubscription } from './nats-subscription.js';
import { settlesWithin } from './timing.js';
import type { TraceCarrier } from './trace-context.js';

export interface NatsEventBusOptions {
  /** e.g. `nats://nats:4222`. */
  servers: string | string[];
  /** Connection name, shown by the server's monitoring: the service's name. */
  name: string;
  logger: Logger;
  /** Default `EVENTS`. */
  stream?: string;
  /** Default `events`: the stream holds `<prefix>.>`. Tests use their own to share a server. */
  subjectPrefix?: string;
  /** JetStream de-duplicates a re-published event id within this window; default 120,000 ms. */
  duplicateWindowMs?: number;
  /** A message not acked within this long is redelivered; default 30,000 ms (handlers in flight extend it). */
  ackWaitMs?: number;
  /** Unacknowledged messages per consumer, over all replicas; default 1,000, never below `concurrency`. */
  maxAckPending?: number;
  /** Redelivery delay after a handler failure; default 1 s doubling to 60 s. */
  retry?: RetryBackoff;
  /** How long a publish waits for JetStream's acknowledgement; default 5,000 ms. */
  publishTimeoutMs?: number;
  /** Bound on waiting for handlers in flight at stop and close; default 10,000 ms. */
  closeTimeoutMs?: number;
  /**
   * Measures the bus's own waits: for handlers in flight at stop, for the drain at close, and
   * before a consume loop restarts; default the system's. The NATS client's and server's timers
   * (ack_wait, reconnects, the publish time-out) run in real time whatever it is.
   */
  clock?: Clock;
}

/**
 * The EventBus over NATS JetStream: stream `EVENTS` on `events.>` (file storage), publishes with
 * `Nats-Msg-Id` = event id so a re-published outbox row is dropped as a duplicate, and durable pull
 * consumers with explicit ack. The connection reconnects forever; while it is away publish rejects
 * at once (the relay keeps the row and retries) and consumers resume when it is back.
 */
export class NatsEventBus implements EventBus {
  readonly system = 'nats';
  private readonly js: JetStreamClient;
  private readonly stream: string;
  private readonly prefix: string;
  private readonly subscriptions = new Set<NatsSubscription>();
  private streamReady: Promise<void> | undefined;
  private connected = true;
  private closing = false;
  private readonly watching: Promise<void>;
  private readonly clock: Clock;

  private constructor(
    private readonly nc: NatsConnection,
    private readonly jsm: JetStreamManager,
    private readonly options: NatsEventBusOptions,
  ) {
    this.js = jetstream(nc);
    this.stream = options.stream ?? 'EVENTS';
    this.prefix = options.subjectPrefix ?? EVENT_SUBJECT_PREFIX;
    this.clock = options.clock ?? systemClock;
    this.watching = this.watchConnection();
  }

  /** Connects (failing fast when NATS is unreachable at start) and creates or updates the stream. */
  static async connect(options: NatsEventBusOptions): Promise<NatsEventBus> {
    const nc = await connect({
      servers: options.servers,
      name: options.name,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 1_000,
    });
    try {
      const bus = new NatsEventBus(nc, await jetstreamManager(nc), options);
      await bus.ensureStream();
      return bus;
    } catch (error) {
      await nc.close();
      throw error;
    }
  }

  async publish(envelope: EventEnvelope<object>, json = JSON.stringify(envelope), trace?: TraceCarrier | null): Promise<void> {
    if (this.closing) throw new Error('The event bus is closed.');
    // A request made while disconnected would sit in the reconnect buffer and time out anyway.
    if (!this.connected) throw new Error('NATS is disconnected.');
    await this.ensureStream();
    try {
      await this.js.publish(eventSubject(envelope, this.prefix), json, {
        msgID: envelope.id,
        ...(trace ? { headers: traceHeaders(trace) } : {}),
        expect: { streamName: this.stream },
        timeout: this.options.publishTimeoutMs ?? 5_000,
      });
    } catch (error) {
      // The stream may have gone (a server restarted without its store): recreate it next time.
      this.streamReady = undefined;
      throw error;
    }
  }

  /**
   * One after another, each awaiting JetStream's acknowledgement: pipelined publishes could store
   * event k+1 while k is refused, and k's retry would then reach consumers after k+1.
   */
  async publishAll(events: readonly OutgoingEvent[]): Promise<void> {
    for (const event of events) await this.publish(event.envelope, event.json, event.trace);
  }

  async subscribe(consumer: EventConsumer): Promise<Subscription> {
    if (this.closing) throw new Error('The event bus is closed.');
    await this.ensureStream();
    const subscription = new NatsSubscription({
      js: this.js,
      stream: this.stream,
      consumer,
      ensureConsumer: () => this.ensureConsumer(consumer),
      logger: this.options.logger.child({ component: 'event-consumer', consumer: consumer.name }),
      ackWaitMs: this.ackWaitMs,
      retry: this.options.retry ?? { initialMs: 1_000, maxMs: 60_000 },
      stopTimeoutMs: this.options.closeTimeoutMs ?? 10_000,
      clock: this.clock,
    });
    await subscription.start();
    this.subscriptions.add(subscription);
    return {
      stop: async () => {
        this.subscriptions.delete(subscription);
        await subscription.stop();
      },
    };
  }

  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    await Promise.all([...this.subscriptions].map((subscription) => subscription.stop()));
    this.subscriptions.clear();
    // drain flushes the acks of the handlers that just finished, then closes.
    const drained = this.nc.isClosed() ? Promise.resolve() : this.nc.drain();
    if (!(await settlesWithin(drained, this.options.closeTimeoutMs ?? 10_000, this.clock))) {
      this.options.logger.warn('NATS did not drain in time; closing');
    }
    // A drain refused while NATS is down leaves the connection open and reconnecting forever (and
    // the status watcher with it): close it whatever the drain did.
    if (!this.nc.isClosed()) await this.nc.close();
    await this.watching;
  }

  private get ackWaitMs(): number {
    return this.options.ackWaitMs ?? 30_000;
  }

  private ensureStream(): Promise<void> {
    this.streamReady ??= this.createOrUpdateStream().catch((error: unknown) => {
      this.streamReady = undefined;
      throw error;
    });
    return this.streamReady;
  }

  private async createOrUpdateStream(): Promise<void> {
    const config = {
      name: this.stream,
      subjects: [`${this.prefix}.>`],
      storage: StorageType.File,
      duplicate_window: nanos(this.options.duplicateWindowMs ?? 120_000),
    };
    try {
      await this.jsm.streams.info(this.stream);
    } catch (error) {
      if (!isApiError(error, JetStreamApiCodes.StreamNotFound)) throw error;
      await this.jsm.streams.add(config);
      return;
    }
    await this.jsm.streams.update(this.stream, { subjects: config.subjects, duplicate_window: config.duplicate_window });
  }

  /** Creates the durable pull consumer, or brings an existing one's settings up to date. */
  private async ensureConsumer(consumer: EventConsumer): Promise<void> {
    const settings = {
      filter_subject: consumer.filter,
      ack_wait: nanos(this.ackWaitMs),
      max_ack_pending: Math.max(this.options.maxAckPending ?? 1_000, consumer.concurrency),
    };
    try {
      await this.jsm.consumers.info(this.stream, consumer.name);
    } catch (error) {
      if (!isApiError(error, JetStreamApiCodes.ConsumerNotFound)) throw error;
      await this.jsm.consumers.add(this.stream, {
        ...settings,
        durable_name: consumer.name,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
      });
      return;
    }
    await this.jsm.consumers.update(this.stream, consumer.name, settings);
  }

  private async watchConnection(): Promise<void> {
    const logger = this.options.logger.child({ component: 'nats' });
    try {
      for await (const status of this.nc.status()) {
        if (status.type === 'disconnect') {
          this.connected = false;
          logger.warn({ server: status.server }, 'NATS disconnected; reconnecting');
        } else if (status.type === 'reconnect') {
          this.connected = true;
          logger.info({ server: status.server }, 'NATS reconnected');
        } else if (status.type === 'error') {
          logger.error({ err: status.error }, 'NATS connection error');
        }
      }
    } catch (error) {
      logger.debug({ err: error }, 'NATS status stream ended');
    }
  }
}

/** The trace context as message headers (`traceparent`, `tracestate`), beside `Nats-Msg-Id`. */
function traceHeaders(trace: TraceCarrier): MsgHdrs {
  const result = headers();
  for (const [key, value] of Object.entries(trace)) result.set(key, value);
  return result;
}

function isApiError(error: unknown, code: number): boolean {
  return error instanceof JetStreamApiError && error.code === code;
}
