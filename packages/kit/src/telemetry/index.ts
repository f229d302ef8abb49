import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { FastifyOtelInstrumentation } from '@fastify/otel';
import { context } from '@opentelemetry/api';
import { suppressTracing } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import type { Instrumentation } from '@opentelemetry/instrumentation';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { RuntimeNodeInstrumentation } from '@opentelemetry/instrumentation-runtime-node';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace';
import { ConfigError } from '../config.js';
import { UNTRACED_PATHS } from './http-server.js';
import { PgQueryInstrumentation } from './pg-instrumentation.js';
import { isUntracedAgent } from './untraced-agent.js';

export interface TelemetrySettings {
  /** `service.name` of every span and metric (OTEL_SERVICE_NAME overrides it). */
  serviceName: string;
  /** OTEL_EXPORTER_OTLP_ENDPOINT; spans are recorded and exported only when it is set. */
  otlpEndpoint?: string | undefined;
  /**
   * Where Prometheus scrapes `/metrics` on a listener of its own (the distributed mode's
   * METRICS_PORT). Without it metrics are still kept, for `serveMetrics` in a server of the caller's.
   */
  metrics?: MetricsAddress | undefined;
}

export interface MetricsAddress {
  host: string;
  port: number;
}

export interface Telemetry {
  /** True when spans are recorded and exported. */
  readonly exporting: boolean;
  /** `http://host:port/metrics`, when served on a listener of its own. */
  readonly metricsUrl: string | undefined;
  /**
   * Answers a scrape in the Prometheus text format, for a server that serves `/metrics` itself
   * (the all-in-one gateway, on its own port).
   */
  readonly serveMetrics: (request: IncomingMessage, response: ServerResponse) => void;
  /** Flushes pending spans and closes the metrics listener; bounded by the exporters' timeouts. */
  shutdown(): Promise<void>;
}

interface Running {
  handle: Telemetry;
  /** Opens the `/metrics` listener at `address` unless one is open already. */
  listen(address: MetricsAddress): Promise<void>;
}

let running: Running | undefined;

/**
 * The maintained instrumentations every process loads: outgoing HTTP, fetch/undici (webhook
 * attempts, model and integration calls), PostgreSQL's queries (kit's db reports its pools), Redis,
 * Node's runtime (its metrics only) and, when spans are exported, Fastify's requests, routes and
 * hooks. gRPC calls are the kit's own to trace and measure (grpc/observe.ts), over the network as
 * in process: OpenTelemetry's gRPC instrumentation wrapped every call again, for ~7 % of the mesh's
 * CPU per request, to make the same spans.
 * Each patches its module when it is first loaded, so they take effect only for modules loaded after `startTelemetry` — which is why
 * processes load it with `--import @agent-platform/kit/telemetry/register`.
 *
 * Incoming HTTP is the servers' own (`httpServerTelemetry`): trace context and the request metric
 * from two Fastify hooks, and the request span from `@fastify/otel`, which only makes spans (one per
 * hook and handler too), so it is loaded only when they are recorded. Unexported, PostgreSQL's
 * queries are measured whatever runs them (there is no request span to require); exported, only
 * those under a span, so background polling makes no traces of its own.
 */
export function instrumentations(options: { exporting: boolean }): Instrumentation[] {
  const fastify = options.exporting
    ? [
        new FastifyOtelInstrumentation({
          registerOnInitialization: true,
          ignorePaths: (route) => UNTRACED_PATHS.has(route.url),
          // Named as HTTP server spans are: method and route.
          requestHook: (span, request) => span.updateName(`${request.method} ${request.routeOptions.url ?? ''}`.trimEnd()),
        }),
      ]
    : [];
  return [
    new HttpInstrumentation({ disableIncomingRequestInstrumentation: true, ignoreOutgoingRequestHook: (request) => isUntracedAgent(request.agent) }),
    new UndiciInstrumentation(),
    // Unexported, a pool checkout's span is never recorded, yet making it costs a context switch.
    new PgQueryInstrumentation({ requireParentSpan: options.exporting, ignoreConnectSpans: !options.exporting }),
    new IORedisInstrumentation({ requireParentSpan: true }),
    // Garbage-collection pauses by kind and event-loop delay: what a request's tail latency waits out.
    new RuntimeNodeInstrumentation(),
    ...fastify,
  ];
}

/**
 * Starts the OpenTelemetry SDK once per process; a later call answers the first's handle, and
 * opens the metrics listener if it names one and none is open. So the `--import` hook starts the
 * SDK before any module loads, and the `main` says where metrics go: METRICS_PORT in the
 * distributed mode; the gateway's own port in the all-in-one mode, where a second copy on the
 * same machine would otherwise collide on one metrics port.
 *
 * Context propagation is always on, so a caller's `traceparent` reaches every service and every
 * log line even without a collector. Spans are recorded only with an OTLP endpoint: without one no
 * tracer provider is installed and every span is a free placeholder carrying its parent's ids.
 * Metrics are always kept.
 */
export async function startTelemetry(settings: TelemetrySettings): Promise<Telemetry> {
  running ??= startSdk(settings);
  // A taken port is a configuration error: fail the start rather than run unobserved.
  if (settings.metrics) await running.listen(settings.metrics);
  return running.handle;
}

function startSdk(settings: TelemetrySettings): Running {
  // Read on demand only: it never listens itself (the listener below, or the caller's server, does).
  const prometheus = new PrometheusExporter({ preventServerStart: true });
  const sdk = new NodeSDK({
    serviceName: process.env.OTEL_SERVICE_NAME ?? settings.serviceName,
    instrumentations: instrumentations({ exporting: Boolean(settings.otlpEndpoint) }),
    spanProcessors: settings.otlpEndpoint
      ? [new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url: `${settings.otlpEndpoint.replace(/\/$/, '')}/v1/traces` }) })]
      : [],
    metricReaders: [prometheus],
    // Logs go to stdout through pino, not through the SDK.
    logRecordProcessors: [],
  });
  sdk.start();
  const serveMetrics = (request: IncomingMessage, response: ServerResponse) => prometheus.getMetricsRequestHandler(request, response);
  let listener: { server: Server; url: string } | undefined;
  return {
    handle: {
      exporting: Boolean(settings.otlpEndpoint),
      get metricsUrl() {
        return listener?.url;
      },
      serveMetrics,
      shutdown: async () => {
        running = undefined;
        const server = listener?.server;
        listener = undefined;
        if (server) await new Promise((resolve) => server.close(resolve));
        await sdk.shutdown();
      },
    },
    listen: async (address) => {
      if (listener) return;
      const server = await listenForScrapes(address, serveMetrics);
      listener = { server, url: `http://${address.host}:${address.port}/metrics` };
    },
  };
}

/** `/metrics` on a port of its own; anything else is 404. Rejects with the listen error (EADDRINUSE…). */
async function listenForScrapes(address: MetricsAddress, serve: Telemetry['serveMetrics']): Promise<Server> {
  const server = createServer((request, response) => {
    if (request.url?.split('?')[0] === '/metrics') return serve(request, response);
    response.statusCode = 404;
    response.end();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: address.host, port: address.port }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  // Scrapes never keep a process alive that would otherwise end.
  return server.unref();
}

/**
 * Where `/metrics` is served in the distributed mode: METRICS_PORT (9464 by default, the
 * OpenTelemetry Prometheus exporter's registered port; "off" serves none) on METRICS_HOST
 * (loopback by default; images set 0.0.0.0 so Prometheus can scrape the pod). A bad value is a
 * ConfigError, for `loadConfigOrExit`.
 */
export function metricsAddressFrom(env: NodeJS.ProcessEnv): MetricsAddress | undefined {
  if (env.METRICS_PORT === 'off') return undefined;
  const port = Number(env.METRICS_PORT ?? 9464);
  if (!Number.isInteger(port) || port < 1 || port > 65_535) {
    throw new ConfigError(`Invalid configuration:\n  METRICS_PORT: must be a port number or "off", not "${env.METRICS_PORT}"`);
  }
  return { host: env.METRICS_HOST ?? '127.0.0.1', port };
}

/**
 * Runs `work` out of every instrumentation's sight: no spans, no `traceparent` added to its
 * requests. For a caller that stands outside the platform though it shares this process (a test
 * sending its own `traceparent`).
 */
export function withoutTracing<T>(work: () => T): T {
  return context.with(suppressTracing(context.active()), work);
}
export { observeBacklog, type BacklogReading } from './backlog.js';
