import type { EventEnvelope } from './envelope.js';
import type { TraceCarrier } from './trace-context.js';

/**
 * The port between the outbox relay, the event transport and consumers. Two adapters implement it,
 * chosen once at start: NATS JetStream (stream `EVENTS`, subjects `events.<tenant_id>.<type>`) and
 * an in-process bus for the local all-in-one mode. Delivery is at least once; handlers must be
 * idempotent on the event id.
 */
export interface EventBus {
  /** `messaging.system` of its spans and metrics. */
  readonly system: 'nats' | 'in-process';

  /**
   * Resolves once the event is durably accepted: JetStream acknowledged it (de-duplicated on the
   * event id as `Nats-Msg-Id`), or — in process — every matching consumer's handler succeeded.
   * Rejects when it could not be accepted; the relay then keeps the row and retries.
   *
   * `json` is the exact text to deliver (the outbox row as recorded, so what a webhook signs reads
   * in envelope order); it must encode `envelope`. Default: `JSON.stringify(envelope)`.
   *
   * `trace` is the W3C trace context the event was recorded in; consumers' handlers run inside it
   * (NATS carries it as `traceparent`/`tracestate` headers). Without it they start a new trace.
   */
  publish(envelope: EventEnvelope<object>, json?: string, trace?: TraceCarrier | null): Promise<void>;

  /**
   * `publish` for a run of events, in order: resolves once every one is durably accepted, and
   * rejects when any was not; the relay then publishes the whole run again (what was accepted is
   * de-duplicated on the event id). One unit of work per run where the transport allows it: the
   * in-process bus hands the run to a consumer's `handleBatch`, so its events cost one turn of the
   * process, not one each.
   */
  publishAll(events: readonly OutgoingEvent[]): Promise<void>;

  /** Starts a durable consumer; events published before it started are delivered too (JetStream). */
  subscribe(consumer: EventConsumer): Promise<Subscription>;

  /** Stops consuming, lets handlers in flight finish (bounded), and closes the connection. */
  close(): Promise<void>;
}

export interface EventConsumer {
  /** Durable name: one per consuming service; replicas with the same name share the work. */
  name: string;
  /** NATS subject filter, e.g. `events.>` (every tenant's every event). */
  filter: string;
  /** Handlers running at once, at most. */
  concurrency: number;
  /**
   * Handles one event. Resolving acknowledges it; rejecting makes it come back later (with
   * back-off), so a handler must be idempotent on `envelope.id`.
   */
  handle(envelope: EventEnvelope<object>, delivery: Delivery): Promise<void>;
  /**
   * Handles a run of events published together, as one unit (`handle` when absent): resolving
   * acknowledges all of them, rejecting brings all of them back. The handler runs under one span
   * linked to every event's trace; work an event leaves for later continues its own `trace`. Used
   * where a bus receives runs (in process).
   */
  handleBatch?(events: readonly ConsumedEvent[]): Promise<void>;
}

/** An event as the relay publishes it. */
export interface OutgoingEvent {
  envelope: EventEnvelope<object>;
  /** The exact text to deliver (see `publish`). */
  json: string;
  /** The W3C trace context it was recorded in. */
  trace: TraceCarrier | null;
}

/** One event of a run handed to `handleBatch`. */
export interface ConsumedEvent {
  envelope: EventEnvelope<object>;
  delivery: Delivery;
  /** The trace context it was published in, for work that continues it later; null without one. */
  trace: TraceCarrier | null;
}

/** How an event reached a handler. */
export interface Delivery {
  /** The event exactly as published: sign or forward these characters, not a re-serialisation. */
  json: string;
  /** 1 on the first delivery to this consumer, counting up on each redelivery. */
  attempt: number;
}

export interface Subscription {
  /** Stops fetching and waits (bounded) for handlers in flight. */
  stop(): Promise<void>;
}

export type { RetryBackoff } from '../backoff.js';
