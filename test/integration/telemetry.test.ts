import { randomBytes } from 'node:crypto';
import { startTelemetry, withoutTracing, type Telemetry } from '@agent-platform/kit/telemetry';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeTrace, descendsFrom, SPAN_KIND, startOtlpCollector, type OtlpCollector } from '../support/otlp-collector.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';

let collector: OtlpCollector;
let telemetry: Telemetry;
let platform: TestPlatform;

beforeAll(async () => {
  collector = await startOtlpCollector();
  telemetry = await startTelemetry({ serviceName: 'telemetry-test', otlpEndpoint: collector.url });
  platform = await startTestPlatform();
});

afterAll(async () => {
  await platform.stop();
  await telemetry.shutdown();
  await collector.close();
});

describe('tracing across the mesh', () => {
  it('continues the caller trace through the gateway and the gRPC hop to identity, and exports the spans', async () => {
    const traceId = randomBytes(16).toString('hex');
    const callerSpanId = randomBytes(8).toString('hex');
    // The test is a caller outside the platform: its own request is not traced by this process.
    const response = await withoutTracing(() =>
      fetch(`${platform.api}/auth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', traceparent: `00-${traceId}-${callerSpanId}-01` },
        body: JSON.stringify({ email: `trace-${traceId}@example.com`, password: 'a good long password' }),
      }),
    );
    expect(response.status).toBe(201);
    await telemetry.shutdown(); // flushes the batch to the collector

    const spans = collector.spans.filter((span) => span.traceId === traceId);
    const gatewaySpan = spans.find((span) => span.kind === SPAN_KIND.SERVER && span.parentSpanId === callerSpanId);
    expect(gatewaySpan, describeTrace(spans)).toBeDefined();
    const rpc = 'grpc.agentplatform.identity.v1.AuthService/Register';
    const clientSpan = spans.find((span) => span.kind === SPAN_KIND.CLIENT && span.name === rpc);
    const serverSpan = spans.find((span) => span.kind === SPAN_KIND.SERVER && span.name === rpc);
    // Fastify's route and handler spans may sit between the request's span and the call it makes.
    expect(descendsFrom(clientSpan, gatewaySpan, spans), describeTrace(spans)).toBe(true);
    expect(serverSpan?.parentSpanId).toBe(clientSpan?.spanId);
  });
});
