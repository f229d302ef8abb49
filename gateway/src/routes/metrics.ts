import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyPluginCallback } from 'fastify';

/** Answers a Prometheus scrape on the raw request (the process's telemetry: `Telemetry.serveMetrics`). */
export type MetricsHandler = (request: IncomingMessage, response: ServerResponse) => void;

/**
 * `/metrics` on the gateway's own port, registered only when the gateway is given a handler: the
 * all-in-one mode, where one process is one port, so a second copy on another PORT has nothing
 * else to collide on. The distributed gateway serves its metrics on METRICS_PORT instead, off the
 * public port. Unauthenticated and outside the API, like the probes; not in the OpenAPI document.
 */
const metricsRoute: FastifyPluginCallback<{ handler: MetricsHandler }> = (app, options, done) => {
  app.get('/metrics', { schema: { hide: true } }, (request, reply) => {
    // The exporter writes the answer itself, once the metrics are collected.
    reply.hijack();
    options.handler(request.raw, reply.raw);
  });
  done();
};

export default metricsRoute;
