import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildGateway, loadGatewayConfig, type Gateway } from '@agent-platform/gateway';
import { buildIdentityService, loadIdentityConfig, type IdentityService } from '@agent-platform/identity';
import { createLogger } from '@agent-platform/kit';
import { InProcessEventBus } from '@agent-platform/kit/events';
import { startTelemetry, type Telemetry } from '@agent-platform/kit/telemetry';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

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

const SPAN_KIND = { SERVER: 2, CLIENT: 3 } as const;
const ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const logger = createLogger({ service: 'telemetry-test', level: 'silent' });
const database = `telemetry_${randomBytes(6).toString('hex')}`;

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
let identity: IdentityService;
let gateway: Gateway;
let baseUrl: string;

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  await client.query(sql).finally(() => client.end());
}

beforeAll(async () => {
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
  const { port } = collector.address() as AddressInfo;
  telemetry = startTelemetry({ serviceName: 'telemetry-test', otlpEndpoint: `http://127.0.0.1:${port}` });
  await admin(`CREATE DATABASE ${database}`);
  identity = await buildIdentityService(
    loadIdentityConfig({ DATABASE_URL: Object.assign(new URL(ADMIN_URL), { pathname: `/${database}` }).toString(), GRPC_HOST: '127.0.0.1', GRPC_PORT: '0' }),
    { logger, bus: new InProcessEventBus({ consumers: [], logger }) },
  );
  const { port: identityPort } = await identity.start();
  gateway = await buildGateway(loadGatewayConfig({ HOST: '127.0.0.1', PORT: '0', IDENTITY_ADDR: `127.0.0.1:${identityPort}` }), { logger });
  baseUrl = (await gateway.start()).url;
});

afterAll(async () => {
  await gateway.stop();
  await identity.stop();
  await telemetry.shutdown();
  await admin(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  await new Promise((resolve) => collector.close(resolve));
});

describe('tracing across the mesh', () => {
  it('continues the caller trace through the gateway and the gRPC hop to identity, and exports the spans', async () => {
    const traceId = randomBytes(16).toString('hex');
    const callerSpanId = randomBytes(8).toString('hex');
    const response = await fetch(`${baseUrl}/api/v1/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', traceparent: `00-${traceId}-${callerSpanId}-01` },
      body: JSON.stringify({ email: `trace-${traceId}@example.com`, password: 'a good long password' }),
    });
    expect(response.status).toBe(201);
    await telemetry.shutdown(); // flushes the batch to the collector

    const spans = received.filter((span) => span.traceId === traceId);
    const gatewaySpan = spans.find((span) => span.kind === SPAN_KIND.SERVER && span.parentSpanId === callerSpanId);
    expect(gatewaySpan, JSON.stringify(spans)).toBeDefined();
    const rpc = '/agentplatform.identity.v1.AuthService/Register';
    const clientSpan = spans.find((span) => span.kind === SPAN_KIND.CLIENT && span.name === rpc);
    const serverSpan = spans.find((span) => span.kind === SPAN_KIND.SERVER && span.name === rpc);
    expect(clientSpan?.parentSpanId).toBe(gatewaySpan?.spanId);
    expect(serverSpan?.parentSpanId).toBe(clientSpan?.spanId);
  });
});
