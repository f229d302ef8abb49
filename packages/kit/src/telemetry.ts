import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';

export interface TelemetrySettings {
  serviceName: string;
  /** OTEL_EXPORTER_OTLP_ENDPOINT; spans are exported only when it is set. */
  otlpEndpoint?: string | undefined;
}

export interface Telemetry {
  /** True when spans are recorded and exported. */
  readonly exporting: boolean;
  /** Flushes pending spans; bounded by the exporter's own timeout. */
  shutdown(): Promise<void>;
}

let propagationInstalled = false;

/**
 * Context propagation is always on, so a caller's `traceparent` reaches every service and every
 * log line even without a collector; recording and exporting spans is on only with an endpoint.
 * Call once per process, first thing in main (the all-in-one launcher calls it once for all).
 */
export function startTelemetry(settings: TelemetrySettings): Telemetry {
  if (!propagationInstalled) {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    propagationInstalled = true;
  }
  if (!settings.otlpEndpoint) {
    return { exporting: false, shutdown: () => Promise.resolve() };
  }
  const url = `${settings.otlpEndpoint.replace(/\/$/, '')}/v1/traces`;
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: settings.serviceName }),
    spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url }) })],
  });
  trace.setGlobalTracerProvider(provider);
  return { exporting: true, shutdown: () => provider.shutdown() };
}
