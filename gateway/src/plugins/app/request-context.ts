import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { httpServerTelemetry } from '@agent-platform/kit';
import fp from 'fastify-plugin';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Fastify's genReqId: echo a well-formed X-Request-Id, otherwise make one. */
export function requestIdOf(request: IncomingMessage): string {
  const incoming = request.headers['x-request-id'];
  return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
}

/**
 * Every response carries X-Request-Id, and each request gets one access-log line when its response
 * is sent (with its request id, and the trace id the logger adds). The kit's hooks continue the
 * caller's `traceparent` for the whole request, so its gRPC clients carry the trace onwards, and
 * measure it by route (with `@fastify/otel`'s spans of the request, each hook and handler when
 * spans are exported).
 */
export default fp(
  (app, _options, done) => {
    app.addHook('onRequest', httpServerTelemetry.onRequest);
    app.addHook('onRequest', (request, reply, next) => {
      reply.header('x-request-id', request.id);
      next();
    });

    app.addHook('onResponse', httpServerTelemetry.onResponse);
    app.addHook('onResponse', (request, reply, next) => {
      request.log.info({ method: request.method, url: request.url, status: reply.statusCode, ms: Math.round(reply.elapsedTime), ip: request.ip }, 'request');
      next();
    });
    done();
  },
  { name: 'request-context' },
);
