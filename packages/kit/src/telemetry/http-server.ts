import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { context, metrics, propagation, trace, ValueType, type Histogram } from '@opentelemetry/api';

/** The parts of a Fastify request the hooks read (the kit does not depend on Fastify). */
export interface ServedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  protocol: string;
  raw: IncomingMessage;
  routeOptions: { url?: string | undefined };
}

export interface ServedReply {
  statusCode: number;
  /** Milliseconds since the request arrived. */
  elapsedTime: number;
}

type Next = () => void;

/** Requests that are probes or scrapes, not traffic: no span, no request metric. */
export const UNTRACED_PATHS: ReadonlySet<string> = new Set(['/metrics', '/healthz', '/readyz']);

let requestDuration: Histogram | undefined;

/**
 * Made at the first request, not when this module loads: the telemetry hook loads it before it
 * starts the SDK, and a meter taken before then is a no-op for good.
 */
function requestDurations(): Histogram {
  requestDuration ??= metrics.getMeter('@agent-platform/kit').createHistogram('http.server.request.duration', {
    unit: 's',
    valueType: ValueType.DOUBLE,
    description: 'Duration of HTTP server requests.',
    // The HTTP semantic conventions' boundaries, as the HTTP instrumentation used.
    advice: { explicitBucketBoundaries: [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10] },
  });
  return requestDuration;
}

function untraced(request: ServedRequest): boolean {
  return UNTRACED_PATHS.has(request.url.split('?', 1)[0]!);
}

/**
 * The telemetry of a Fastify server's requests, as `onRequest` and `onResponse` hooks: the caller's
 * `traceparent` continued for the whole request (its logs, and the calls it makes onwards), and
 * `http_server_request_duration` by route and status. Spans, when exported, are `@fastify/otel`'s:
 * its request span is then the active one and is left as it is.
 *
 * The HTTP instrumentation's server side did this before, at a price measured on an authenticated
 * read: with spans unexported it still built every span attribute and bound each request's and
 * response's emitters, ~15 % of the platform's CPU per request (docs/performance.md, Telemetry).
 */
export const httpServerTelemetry = {
  onRequest: (request: ServedRequest, _reply: unknown, next: Next): void => {
    if (trace.getSpan(context.active()) !== undefined || untraced(request)) return next();
    const caller = propagation.extract(context.active(), request.headers);
    if (trace.getSpan(caller) === undefined) return next();
    context.with(caller, next);
  },

  onResponse: (request: ServedRequest, reply: ServedReply, next: Next): void => {
    if (!untraced(request)) {
      const attributes: Record<string, string | number> = {
        'http.request.method': request.method,
        'http.response.status_code': reply.statusCode,
        'url.scheme': request.protocol,
        'network.protocol.version': request.raw.httpVersion,
      };
      if (request.routeOptions.url !== undefined) attributes['http.route'] = request.routeOptions.url;
      if (reply.statusCode >= 500) attributes['error.type'] = String(reply.statusCode);
      requestDurations().record(reply.elapsedTime / 1_000, attributes);
    }
    next();
  },
};
