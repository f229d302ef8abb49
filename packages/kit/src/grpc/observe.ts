import { status as GrpcStatus } from '@grpc/grpc-js';
import { context, INVALID_SPAN_CONTEXT, metrics, SpanKind, SpanStatusCode, trace, type Context, type Span } from '@opentelemetry/api';
import { isWrapped } from '@opentelemetry/instrumentation';
import { callerContext, type CallHeaders } from './metadata.js';

const tracer = trace.getTracer('@agent-platform/kit/grpc');
const meter = metrics.getMeter('@agent-platform/kit/grpc');

/** Per semantic conventions (rpc.server.call.duration), for every call whichever transport carried it. */
const serverDuration = meter.createHistogram('rpc.server.call.duration', {
  unit: 's',
  description: 'Duration of gRPC calls this server answered.',
  advice: { explicitBucketBoundaries: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] },
});

/** Stands in where an instrumentation already made the call's span: every method is a no-op. */
const NO_SPAN: Span = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

/**
 * True when @opentelemetry/instrumentation-grpc has patched this grpc-js function (the telemetry
 * hook loaded it first). Network calls are then traced by it, and the kit's own spans would be a
 * second copy; calls it cannot see (the in-process transport) are traced here.
 */
export function patchedByInstrumentation<T extends object>(owner: T, method: keyof T & string): boolean {
  return isWrapped(owner[method]);
}

/** `agentplatform.identity.v1.AuthService/Register` as the instrumentation's attributes name it. */
function rpcAttributes(path: string) {
  const [, service = '', method = ''] = path.split('/');
  return { 'rpc.system': 'grpc', 'rpc.service': service, 'rpc.method': method };
}

/** The span name instrumentation-grpc gives, so both transports read the same in a trace. */
function spanName(path: string): string {
  return `grpc.${path.slice(1)}`;
}

export interface ClientCallSpan {
  span: Span;
  /** The context whose trace the call's headers must carry. */
  ctx: Context;
}

/** A CLIENT span for a call, unless the transport's calls are traced by the instrumentation. */
export function startClientCall(path: string, tracedByTransport: boolean): ClientCallSpan {
  if (tracedByTransport) return { span: NO_SPAN, ctx: context.active() };
  const span = tracer.startSpan(spanName(path), { kind: SpanKind.CLIENT, attributes: rpcAttributes(path) });
  return { span, ctx: trace.setSpan(context.active(), span) };
}

/** Ends a client span with the call's outcome. */
export function endClientCall(span: Span, code: GrpcStatus, message?: string): void {
  span.setAttribute('rpc.grpc.status_code', code);
  if (code !== GrpcStatus.OK) span.setStatus({ code: SpanStatusCode.ERROR, ...(message ? { message } : {}) });
  span.end();
}

export interface ServerCall {
  /** The context the handler runs in. */
  readonly ctx: Context;
  readonly span: Span;
  /** Records the outcome (span status, the duration histogram) and ends the span. */
  end(code: GrpcStatus): void;
}

/**
 * A server call's span and measurement. When the instrumentation traced the call its SERVER span is
 * already active and is the handler's parent; otherwise the caller's trace comes from the headers
 * and the kit makes the SERVER span.
 */
export function startServerCall(path: string, headers: CallHeaders, tracedByTransport: boolean): ServerCall {
  const started = performance.now();
  const attributes = rpcAttributes(path);
  let ctx: Context;
  let span: Span;
  if (tracedByTransport) {
    ctx = context.active();
    span = NO_SPAN;
  } else {
    const parent = callerContext(headers);
    span = tracer.startSpan(spanName(path), { kind: SpanKind.SERVER, attributes }, parent);
    ctx = trace.setSpan(parent, span);
  }
  return {
    ctx,
    span,
    end(code) {
      serverDuration.record((performance.now() - started) / 1000, { ...attributes, 'rpc.grpc.status_code': code });
      span.setAttribute('rpc.grpc.status_code', code);
      // Per the conventions a server span is an error for codes that mean the server failed.
      if (SERVER_FAULTS.has(code)) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    },
  };
}

const SERVER_FAULTS = new Set<GrpcStatus>([
  GrpcStatus.UNKNOWN,
  GrpcStatus.DEADLINE_EXCEEDED,
  GrpcStatus.UNIMPLEMENTED,
  GrpcStatus.INTERNAL,
  GrpcStatus.UNAVAILABLE,
  GrpcStatus.DATA_LOSS,
]);
