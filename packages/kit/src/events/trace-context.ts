import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context, type Span } from '@opentelemetry/api';

/**
 * W3C trace context (`traceparent`, `tracestate`) as plain strings: stored beside an outbox row or
 * a webhook delivery, and sent as NATS headers, so work done later, elsewhere, joins the trace
 * of the request that caused it.
 */
export type TraceCarrier = Record<string, string>;

/** The active trace context as a carrier, or null when there is none to continue. */
export function captureTraceContext(ctx: Context = context.active()): TraceCarrier | null {
  const carrier: TraceCarrier = {};
  propagation.inject(ctx, carrier);
  return Object.keys(carrier).length > 0 ? carrier : null;
}

/**
 * The context a carrier describes. Extracted onto the root context, not the active one: a handler
 * must continue the event's trace, never whatever the relay or a poll loop happened to be in.
 */
export function restoreTraceContext(carrier: TraceCarrier | null | undefined): Context {
  return carrier ? propagation.extract(ROOT_CONTEXT, carrier) : ROOT_CONTEXT;
}

/** Reads a carrier stored as JSON text; anything else (old rows, tampering) starts a new trace. */
export function parseTraceCarrier(value: unknown): TraceCarrier | null {
  if (typeof value !== 'string' || value === '') return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return null;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return null;
  const entries = Object.entries(parsed).filter((entry): entry is [string, string] => typeof entry[1] === 'string');
  return entries.length > 0 ? Object.fromEntries(entries) : null;
}

const tracer = trace.getTracer('@agent-platform/kit/events');

export interface PublishSpanInfo {
  system: 'nats' | 'in-process';
  /** The event type: the subject without its tenant, so span names stay few. */
  eventType: string;
  eventId: string;
}

/**
 * Publishes under a PRODUCER span that continues the trace recorded with the event (the outbox
 * row's carrier), and hands the publish that span's context to send as headers, so the consumer's
 * span is its child and the gap between the request and the relay shows in the trace. An event
 * recorded outside any trace is published without one.
 */
export async function publishInTraceContext<T>(
  carrier: TraceCarrier | null,
  info: PublishSpanInfo,
  publish: (carrier: TraceCarrier | null) => Promise<T>,
): Promise<T> {
  if (!carrier) return publish(null);
  const span = startProducerSpan(carrier, info);
  return endingWith(span, publish(producerCarrier(span, carrier)));
}

/**
 * publishInTraceContext for a run published together: one PRODUCER span per event, each in its
 * own event's trace, all ended when the run's publish settles; `publish` gets each event's carrier.
 */
export async function publishAllInTraceContext<T>(
  events: readonly { carrier: TraceCarrier | null; info: PublishSpanInfo }[],
  publish: (carriers: (TraceCarrier | null)[]) => Promise<T>,
): Promise<T> {
  const spans = events.map(({ carrier, info }) => (carrier ? startProducerSpan(carrier, info) : undefined));
  const carriers = events.map(({ carrier }, index) => {
    const span = spans[index];
    return span && carrier ? producerCarrier(span, carrier) : null;
  });
  return spans.reduce((work, span) => (span ? endingWith(span, work) : work), publish(carriers));
}

function startProducerSpan(carrier: TraceCarrier, info: PublishSpanInfo): Span {
  return tracer.startSpan(
    `send ${info.eventType}`,
    {
      kind: SpanKind.PRODUCER,
      attributes: {
        'messaging.system': info.system,
        'messaging.operation.type': 'send',
        'messaging.destination.template': `events.{tenant_id}.${info.eventType}`,
        'messaging.message.id': info.eventId,
      },
    },
    restoreTraceContext(carrier),
  );
}

/** The carrier a consumer continues: the producer span's, or the recorded one when no span is sampled. */
function producerCarrier(span: Span, recorded: TraceCarrier): TraceCarrier {
  return captureTraceContext(trace.setSpan(ROOT_CONTEXT, span)) ?? recorded;
}

/** Ends `span` when `work` settles, marked as an error when it rejects. */
function endingWith<T>(span: Span, work: Promise<T>): Promise<T> {
  return work.then(
    (result) => {
      span.end();
      return result;
    },
    (error: unknown) => {
      span.recordException(error instanceof Error ? error : String(error));
      span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
      throw error;
    },
  );
}

export interface ConsumeSpanInfo {
  system: 'nats' | 'in-process';
  subject: string;
  /** The subject without its tenant: names the span, so span names stay few. */
  eventType: string;
  consumer: string;
  eventId: string;
  attempt: number;
}

/**
 * Runs an event handler inside the publisher's trace context, under a CONSUMER span named
 * `process <event type>` (OpenTelemetry messaging conventions), so the handler's RPCs, queries and log lines
 * carry the trace id of the request that recorded the event.
 */
export function consumeInTraceContext<T>(carrier: TraceCarrier | null | undefined, info: ConsumeSpanInfo, handle: () => Promise<T>): Promise<T> {
  const parent = restoreTraceContext(carrier);
  const span = tracer.startSpan(
    `process ${info.eventType}`,
    {
      kind: SpanKind.CONSUMER,
      attributes: {
        'messaging.system': info.system,
        'messaging.operation.type': 'process',
        'messaging.destination.name': info.subject,
        'messaging.destination.template': `events.{tenant_id}.${info.eventType}`,
        'messaging.consumer.group.name': info.consumer,
        'messaging.message.id': info.eventId,
        'messaging.message.delivery_count': info.attempt,
      },
    },
    parent,
  );
  return endingWith(span, context.with(trace.setSpan(parent, span), handle));
}

export interface ConsumeBatchSpanInfo {
  system: 'nats' | 'in-process';
  consumer: string;
  attempt: number;
}

/**
 * Runs a batch handler under one CONSUMER span `process batch` linked to each event's trace
 * (OpenTelemetry messaging conventions for batches): a span cannot have many parents. Work an
 * event leaves for later continues that event's own carrier, not this span.
 */
export function consumeBatchInTraceContext<T>(carriers: readonly (TraceCarrier | null)[], info: ConsumeBatchSpanInfo, handle: () => Promise<T>): Promise<T> {
  const links = carriers.flatMap((carrier) => {
    const spanContext = carrier ? trace.getSpanContext(restoreTraceContext(carrier)) : undefined;
    return spanContext ? [{ context: spanContext }] : [];
  });
  const span = tracer.startSpan(
    'process batch',
    {
      kind: SpanKind.CONSUMER,
      links,
      attributes: {
        'messaging.system': info.system,
        'messaging.operation.type': 'process',
        'messaging.consumer.group.name': info.consumer,
        'messaging.batch.message_count': carriers.length,
        'messaging.message.delivery_count': info.attempt,
      },
    },
    ROOT_CONTEXT,
  );
  return endingWith(span, context.with(trace.setSpan(ROOT_CONTEXT, span), handle));
}
