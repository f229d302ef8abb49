import type { IncomingMessage } from 'node:http';
import { FastifyOtelInstrumentation } from '@fastify/otel';
import { context } from '@opentelemetry/api';
import { suppressTracing } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import type { Instrumentation } from '@opentelemetry/instrumentation';
import { GrpcInstrumentation } from '@opentelemetry/instrumentation-grpc';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace';

export interface TelemetrySettings {
  /** `service.name` of every span and metric (OTEL_SERVICE_NAME overrides it). */
  serviceName: string;
  /** OTEL_EXPORTER_OTLP_ENDPOINT; spans are recorded and exported only when it is set. */
  otlpEndpoint?: string | undefined;
  /** Where Prometheus scrapes `/metrics`; without it metrics are kept but not served. */
  metrics?: { host: string; port: number } | undefined;
}

export interface Telemetry {
  /** True when spans are recorded and exported. */
  readonly exporting: boolean;
  /** `http://host:port/metrics`, when served. */
  readonly metricsUrl: string | undefined;
  /** Flushes pending spans and closes the metrics endpoint; bounded by the exporters' timeouts. */
  shutdown(): Promise<void>;
}

/** Requests that are probes or scrapes, not traffic: no span, no request metric. */
const UNTRACED_PATHS = new Set(['/metrics', '/healthz', '/readyz']);

let running: Telemetry | undefined;

/**
 * The maintained instrumentations every process loads: gRPC (the network transport), HTTP in and
 * out, fetch/undici (webhook attempts, model and integration calls), PostgreSQL, Redis, and
 * Fastify's routes and hooks. Each patches its module when it is first loaded, so they take
 * effect only for modules loaded after `startTelemetry` — which is why processes load it with
 * `--import @agent-platform/kit/telemetry/register`.
 */
export function instrumentations(): Instrumentation[] {
  return [
    new HttpInstrumentation({
      ignoreIncomingRequestHook: (request: IncomingMessage) => UNTRACED_PATHS.has(request.url?.split('?')[0] ?? ''),
    }),
    new UndiciInstrumentation(),
    new GrpcInstrumentation(),
    new PgInstrumentation({ requireParentSpan: true }),
    new IORedisInstrumentation({ requireParentSpan: true }),
    new FastifyOtelInstrumentation({ registerOnInitialization: true, ignorePaths: (route) => UNTRACED_PATHS.has(route.url) }),
  ];
}

/**
 * Starts the OpenTelemetry SDK once per process (a second call answers the first's handle, so a
 * `main` may call it whether or not the `--import` hook already did).
 *
 * Context propagation is always on, so a caller's `traceparent` reaches every service and every
 * log line even without a collector. Spans are recorded only with an OTLP endpoint: without one no
 * tracer provider is installed and every span is a free placeholder carrying its parent's ids.
 * Metrics are always kept, served in the Prometheus text format when an address is given.
 */
export async function startTelemetry(settings: TelemetrySettings): Promise<Telemetry> {
  if (running) return running;
  const prometheus = settings.metrics
    ? new PrometheusExporter({ host: settings.metrics.host, port: settings.metrics.port, preventServerStart: true })
    : undefined;
  const sdk = new NodeSDK({
    serviceName: process.env.OTEL_SERVICE_NAME ?? settings.serviceName,
    instrumentations: instrumentations(),
    spanProcessors: settings.otlpEndpoint
      ? [new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url: `${settings.otlpEndpoint.replace(/\/$/, '')}/v1/traces` }) })]
      : [],
    metricReaders: prometheus ? [prometheus] : [],
    // Logs go to stdout through pino, not through the SDK.
    logRecordProcessors: [],
  });
  sdk.start();
  // A taken port is a configuration error: fail the start rather than run unobserved.
  if (prometheus) await prometheus.startServer();
  running = {
    exporting: Boolean(settings.otlpEndpoint),
    metricsUrl: settings.metrics ? `http://${settings.metrics.host}:${settings.metrics.port}/metrics` : undefined,
    shutdown: async () => {
      running = undefined;
      await sdk.shutdown();
    },
  };
  return running;
}

/**
 * Where `/metrics` is served: METRICS_PORT (9464 by default, the OpenTelemetry Prometheus
 * exporter's registered port; "off" serves none) on METRICS_HOST (loopback by default; images set
 * 0.0.0.0 so Prometheus can scrape the pod).
 */
export function metricsAddressFrom(env: NodeJS.ProcessEnv): { host: string; port: number } | undefined {
  if (env.METRICS_PORT === 'off') return undefined;
  const port = Number(env.METRICS_PORT ?? 9464);
  if (!Number.isInteger(port) || port < 1 || port > 65_535) {
    throw new Error(`METRICS_PORT must be a port number or "off", not "${env.METRICS_PORT}".`);
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
