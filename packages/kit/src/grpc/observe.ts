import { status as GrpcStatus } from '@grpc/grpc-js';
import { context, metrics, SpanKind, SpanStatusCode, trace, type Context, type Span } from '@opentelemetry/api';
import { callerContext, type CallHeaders } from './metadata.js';

const tracer = trace.getTracer('@agent-platform/kit/grpc');
const meter = metrics.getMeter('@agent-platform/kit/grpc');

/** Per semantic conventions (rpc.server.call.duration), for every call whichever transport carried it. */
const serverDuration = meter.createHistogram('rpc.server.call.duration', {
  unit: 's',
  description: 'Duration of gRPC calls this server answered.',
  advice: { explicitBucketBoundaries: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] },
});

/** `agentplatform.identity.v1.AuthService/Register` as the instrumentation's attributes name it. */
function rpcAttributes(path: string) {
  const [, service = '', method = ''] = path.split('/');
  return { 'rpc.system': 'grpc', 'rpc.service': service, 'rpc.method': method };
}

/** `grpc.<package.Service>/<Method>`, as OpenTelemetry's gRPC instrumentation names calls. */
function spanName(path: string): string {
  return `grpc.${path.slice(1)}`;
}

export interface ClientCallSpan {
  span: Span;
  /** The context whose trace the call's headers must carry. */
  ctx: Context;
}

/** A CLIENT span for a call, over either transport. */
export function startClientCall(path: string): ClientCallSpan {
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
 * A server call's SERVER span, child of the caller's trace (from the call's headers), and its
 * measurement, over either transport.
 */
export function startServerCall(path: string, headers: CallHeaders): ServerCall {
  const started = performance.now();
  const attributes = rpcAttributes(path);
  const parent = callerContext(headers);
  const span = tracer.startSpan(spanName(path), { kind: SpanKind.SERVER, attributes }, parent);
  const ctx = trace.setSpan(parent, span);
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
