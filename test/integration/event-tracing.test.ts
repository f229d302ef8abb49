import { randomBytes } from 'node:crypto';
import { startTelemetry, withoutTracing, type Telemetry } from '@agent-platform/kit/telemetry';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Api } from '../e2e/harness/client.js';
import { startReceiver, type Receiver } from '@agent-platform/kit/testing';
import { SPAN_KIND, startOtlpCollector, type OtlpCollector } from '../support/otlp-collector.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';

const run = randomBytes(4).toString('hex');
let collector: OtlpCollector;
let telemetry: Telemetry;
let platform: TestPlatform;
let receiver: Receiver;

async function call<T>(method: string, path: string, options: { body?: unknown; token?: string; headers?: Record<string, string> } = {}): Promise<{ status: number; body: T }> {
  // The test is a caller outside the platform: its own requests are not traced by this process.
  return withoutTracing(() => new Api(platform.url).request<T>(method, `/api/v1${path}`, { json: options.body, token: options.token, headers: options.headers }));
}

beforeAll(async () => {
  collector = await startOtlpCollector();
  telemetry = await startTelemetry({ serviceName: 'event-tracing-test', otlpEndpoint: collector.url });
  // The in-process bus, as `pnpm start` wires it.
  platform = await startTestPlatform({ ALLOW_PRIVATE_NETWORK_URLS: 'true' });
  receiver = await startReceiver();
}, 60_000);

afterAll(async () => {
  await platform.stop();
  await receiver.close();
  await telemetry.shutdown();
  await collector.close();
});

describe('tracing across domain events', () => {
  it('continues the purchase request trace through the outbox, the event consumer and the webhook attempt', async () => {
    const email = `evtrace-${run}@example.com`;
    const password = 'a long enough password';
    expect((await call('POST', '/auth/register', { body: { email, password } })).status).toBe(201);
    const { body: login } = await call<{ access_token: string }>('POST', '/auth/login', { body: { username: email, password } });
    const token = login.access_token;
    const webhook = await call<{ id: string }>('POST', '/webhooks', { body: { url: receiver.url('/hooks'), events: ['billing.purchase.completed'] }, token });
    expect(webhook.status).toBe(201);

    const traceId = randomBytes(16).toString('hex');
    const traceparent = `00-${traceId}-${randomBytes(8).toString('hex')}-01`;
    expect((await call('POST', '/billing/purchases', { body: { credits: 3 }, token, headers: { traceparent } })).status).toBe(201);
    const [delivery] = await receiver.waitFor(1);
    // The customer's endpoint gets the documented headers only, never our trace context.
    expect(delivery?.headers.traceparent).toBeUndefined();
    // Recorded after the attempt's span ended, so the flush below includes it.
    await vi.waitFor(
      async () => {
        const log = await call<{ items: { status: string }[] }>('GET', `/webhooks/${webhook.body.id}/deliveries`, { token });
        expect(log.body.items[0]?.status).toBe('delivered');
      },
      { timeout: 10_000, interval: 50 },
    );
    await telemetry.shutdown(); // flushes the batch to the collector

    const spans = collector.spans.filter((span) => span.traceId === traceId);
    const describeSpans = JSON.stringify(spans.map(({ name, kind, spanId, parentSpanId }) => ({ name, kind, spanId, parentSpanId })));
    const identitySpan = spans.find((span) => span.kind === SPAN_KIND.SERVER && span.name === 'grpc.agentplatform.identity.v1.BillingService/CreatePurchase');
    expect(identitySpan, describeSpans).toBeDefined();
    // The relay's publish continues the recording call's trace; the consumer continues the publish.
    const producerSpan = spans.find((span) => span.kind === SPAN_KIND.PRODUCER);
    expect(producerSpan?.name, describeSpans).toBe('send billing.purchase.completed');
    expect(producerSpan?.parentSpanId).toBe(identitySpan?.spanId);
    const consumerSpan = spans.find((span) => span.kind === SPAN_KIND.CONSUMER);
    expect(consumerSpan?.name, describeSpans).toBe('process billing.purchase.completed');
    expect(consumerSpan?.parentSpanId).toBe(producerSpan?.spanId);
    const attemptSpan = spans.find((span) => span.kind === SPAN_KIND.CLIENT && span.name === 'POST');
    expect(attemptSpan?.parentSpanId, describeSpans).toBe(consumerSpan?.spanId);
  }, 60_000);
});
