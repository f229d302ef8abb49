import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildGateway, loadGatewayConfig, type Gateway } from '@agent-platform/gateway';
import { buildIdentityService, loadIdentityConfig, type IdentityService } from '@agent-platform/identity';
import { createLogger } from '@agent-platform/kit';
import { InProcessEventBus } from '@agent-platform/kit/events';
import { startTelemetry, type Telemetry } from '@agent-platform/kit/telemetry';
import { buildWebhookDispatcherService, CONSUMER_NAME, loadWebhookDispatcherConfig, type WebhookDispatcherService } from '@agent-platform/webhook-dispatcher';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Receiver } from '../e2e/harness/receiver.js';

/** The OTLP/JSON span fields this test reads. */
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
}
interface OtlpExport {
  resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[];
}

const SPAN_KIND = { SERVER: 2, CLIENT: 3, CONSUMER: 5 } as const;
const ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const logger = createLogger({ service: 'event-tracing-test', level: 'silent' });
const run = randomBytes(4).toString('hex');
const databases = { identity: `evtrace_identity_${run}`, webhooks: `evtrace_webhooks_${run}` };
const urlOf = (name: string) => Object.assign(new URL(ADMIN_URL), { pathname: `/${name}` }).toString();

/** A collector that speaks OTLP/HTTP with JSON bodies, as the exporter sends them. */
const received: OtlpSpan[] = [];
const collector: Server = createServer((request, response) => {
  let body = '';
  request.on('data', (chunk: Buffer) => (body += chunk.toString()));
  request.on('end', () => {
    if (request.url === '/v1/traces') {
      const payload = JSON.parse(body) as OtlpExport;
      for (const resource of payload.resourceSpans) for (const scope of resource.scopeSpans) received.push(...scope.spans);
    }
    response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
});

let telemetry: Telemetry;
let bus: InProcessEventBus;
let identity: IdentityService;
let dispatcher: WebhookDispatcherService;
let gateway: Gateway;
let receiver: Receiver;
let base: string;

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  await client.query(sql).finally(() => client.end());
}

async function call<T>(method: string, path: string, options: { body?: unknown; token?: string; headers?: Record<string, string> } = {}): Promise<{ status: number; body: T }> {
  const response = await fetch(`${base}/api/v1${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...(options.token ? { authorization: `Bearer ${options.token}` } : {}), ...options.headers },
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
  });
  return { status: response.status, body: (await response.json()) as T };
}

beforeAll(async () => {
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
  const { port } = collector.address() as AddressInfo;
  telemetry = startTelemetry({ serviceName: 'event-tracing-test', otlpEndpoint: `http://127.0.0.1:${port}` });
  for (const name of Object.values(databases)) await admin(`CREATE DATABASE ${name}`);
  // One in-process bus, as the all-in-one launcher wires it.
  bus = new InProcessEventBus({ consumers: [CONSUMER_NAME], logger });
  identity = await buildIdentityService(loadIdentityConfig({ DATABASE_URL: urlOf(databases.identity), GRPC_HOST: '127.0.0.1', GRPC_PORT: '0' }), { logger, bus });
  dispatcher = await buildWebhookDispatcherService(
    loadWebhookDispatcherConfig({
      DATABASE_URL: urlOf(databases.webhooks),
      GRPC_HOST: '127.0.0.1',
      GRPC_PORT: '0',
      WEBHOOK_SECRET_KEY: randomBytes(32).toString('base64'),
      ALLOW_PRIVATE_NETWORK_URLS: 'true',
    }),
    { logger, bus },
  );
  const { port: dispatcherPort } = await dispatcher.start();
  const { port: identityPort } = await identity.start();
  gateway = await buildGateway(
    loadGatewayConfig({ HOST: '127.0.0.1', PORT: '0', IDENTITY_ADDR: `127.0.0.1:${identityPort}`, WEBHOOK_DISPATCHER_ADDR: `127.0.0.1:${dispatcherPort}` }),
    { logger },
  );
  base = (await gateway.start()).url;
  receiver = await Receiver.start();
}, 60_000);

afterAll(async () => {
  await gateway.stop();
  await identity.stop();
  await dispatcher.stop();
  await bus.close();
  await receiver.close();
  await telemetry.shutdown();
  for (const name of Object.values(databases)) await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await new Promise((resolve) => collector.close(resolve));
});

describe('tracing across domain events', () => {
  it('continues the purchase request trace through the outbox, the event consumer and the webhook attempt', async () => {
    const email = `evtrace-${run}@example.com`;
    const password = 'a long enough password';
    expect((await call('POST', '/auth/register', { body: { email, password } })).status).toBe(201);
    const { body: login } = await call<{ access_token: string }>('POST', '/auth/login', { body: { username: email, password } });
    const token = login.access_token;
    const webhook = await call<{ id: string }>('POST', '/webhooks', { body: { url: receiver.url, events: ['billing.purchase.completed'] }, token });
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

    const spans = received.filter((span) => span.traceId === traceId);
    const describeSpans = JSON.stringify(spans.map(({ name, kind, spanId, parentSpanId }) => ({ name, kind, spanId, parentSpanId })));
    const identitySpan = spans.find((span) => span.kind === SPAN_KIND.SERVER && span.name === '/agentplatform.identity.v1.BillingService/CreatePurchase');
    expect(identitySpan, describeSpans).toBeDefined();
    const consumerSpan = spans.find((span) => span.kind === SPAN_KIND.CONSUMER);
    expect(consumerSpan?.name, describeSpans).toMatch(/^events\.[^.]+\.billing\.purchase\.completed process$/);
    expect(consumerSpan?.parentSpanId).toBe(identitySpan?.spanId);
    const attemptSpan = spans.find((span) => span.kind === SPAN_KIND.CLIENT && span.name === 'POST');
    expect(attemptSpan?.parentSpanId, describeSpans).toBe(consumerSpan?.spanId);
  }, 60_000);
});
