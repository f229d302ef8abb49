import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import type { RouteHandlerMethod } from 'fastify';
import fp from 'fastify-plugin';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const tracer = trace.getTracer('@agent-platform/gateway');
const spans = new WeakMap<object, Span>();

/** Fastify's genReqId: echo a well-formed X-Request-Id, otherwise make one. */
export function requestIdOf(request: IncomingMessage): string {
  const incoming = request.headers['x-request-id'];
  return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
}

/**
 * Every response carries X-Request-Id. The caller's `traceparent` is honoured: a server span per
 * request, active around the handler, so the kit's gRPC clients carry the trace onwards. Without
 * an SDK (set up by main or the launcher) the API is a no-op and only propagation remains. Each
 * request gets one access-log line when its response is sent (with its request id and trace id).
 */
export default fp(
  (app, _options, done) => {
    app.decorateRequest('traceContext', null as never);

    app.addHook('onRequest', (request, reply, next) => {
      reply.header('x-request-id', request.id);
      const parent = propagation.extract(ROOT_CONTEXT, request.headers);
      const route = request.routeOptions.url ?? 'unmatched';
      const span = tracer.startSpan(
        `${request.method} ${route}`,
        { kind: SpanKind.SERVER, attributes: { 'http.request.method': request.method, 'http.route': route, 'gateway.request_id': request.id } },
        parent,
      );
      spans.set(request, span);
      request.traceContext = trace.setSpan(parent, span);
      next();
    });

    app.addHook('onResponse', (request, reply, next) => {
      request.log.info({ method: request.method, url: request.url, status: reply.statusCode, ms: Math.round(reply.elapsedTime), ip: request.ip }, 'request');
      const span = spans.get(request);
      if (span) {
        span.setAttribute('http.response.status_code', reply.statusCode);
        if (reply.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
        span.end();
      }
      next();
    });

    app.addHook('onRequestAbort', (request, next) => {
      spans.get(request)?.end();
      next();
    });

    // Handlers run inside the request's trace context (hooks that call out do the same).
    app.addHook('onRoute', (route) => {
      const handler = route.handler;
      const traced: RouteHandlerMethod = function (request, reply) {
        return context.with(request.traceContext, () => handler.call(this, request, reply));
      };
      route.handler = traced;
    });
    done();
  },
  { name: 'request-context' },
);
