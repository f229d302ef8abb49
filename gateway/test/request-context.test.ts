import { startTelemetry } from '@agent-platform/kit/telemetry';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newAccount, startHarness, type Harness } from './support/harness.js';

// Installs W3C propagation and an async context manager, as main and the launcher do.
await startTelemetry({ serviceName: 'gateway-test' });

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('X-Request-Id', () => {
  it('echoes a well-formed incoming id and passes it to the services', async () => {
    const response = await h.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: 'a@example.com', password: 'x' }, headers: { 'x-request-id': 'client:req-42.a_b' } });
    expect(response.headers['x-request-id']).toBe('client:req-42.a_b');
    expect(h.identity.callsOf('Login').at(-1)?.requestId).toBe('client:req-42.a_b');
  });

  it('generates one when the incoming id is absent, malformed or too long', async () => {
    const absent = await h.app.inject({ method: 'GET', url: '/healthz' });
    expect(absent.headers['x-request-id']).toMatch(UUID);
    const malformed = await h.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'bad id with spaces' } });
    expect(malformed.headers['x-request-id']).toMatch(UUID);
    const long = await h.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'a'.repeat(129) } });
    expect(long.headers['x-request-id']).toMatch(UUID);
    expect(absent.headers['x-request-id']).not.toBe(malformed.headers['x-request-id']);
  });

  it('is on error responses too: 404, 400, 401', async () => {
    for (const response of [
      await h.app.inject({ method: 'GET', url: '/api/v1/nowhere', headers: { 'x-request-id': 'r-404' } }),
      await h.app.inject({ method: 'POST', url: '/api/v1/auth/register', headers: { 'x-request-id': 'r-400', 'content-type': 'application/json' }, payload: '{' }),
      await h.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: { 'x-request-id': 'r-401' } }),
    ]) {
      expect(response.statusCode).toBeGreaterThanOrEqual(400);
      expect(response.headers['x-request-id']).toMatch(/^r-40[014]$/);
    }
  });
});

describe('traceparent', () => {
  // Over a socket, as callers come: the kit's hooks continue their trace for the whole request
  // (spans of the request, each hook and handler are @fastify/otel's, loaded only when exporting).
  it("continues the caller's trace into the gRPC calls, in hooks and in handlers", async () => {
    const account = await newAccount(h.app);
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const response = await fetch(`${h.url}/api/v1/auth/me?tenant_id=${account.tenantId}`, {
      headers: { authorization: `Bearer ${account.token}`, traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
    });
    expect(response.status).toBe(200);
    expect(h.identity.callsOf('ResolveMembership').at(-1)?.traceId).toBe(traceId);
    expect(h.identity.callsOf('GetCurrentUser').at(-1)?.traceId).toBe(traceId);
  });

  it("continues it past the reading of a request's body, into the handler's calls", async () => {
    const account = await newAccount(h.app);
    const traceId = '0af7651916cd43dd8448eb211c80319c';
    // Sent in two writes, so the body arrives after the headers, in events of the socket's own.
    const body = new ReadableStream<Uint8Array>({
      async start(controller) {
        controller.enqueue(new TextEncoder().encode('{"name":"Traced",'));
        await new Promise((resolve) => setImmediate(resolve));
        controller.enqueue(new TextEncoder().encode('"type":"assistant"}'));
        controller.close();
      },
    });
    const response = await fetch(`${h.url}/api/v1/agents?tenant_id=${account.tenantId}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.token}`, 'content-type': 'application/json', traceparent: `00-${traceId}-b7ad6b7169203331-01` },
      body,
      duplex: 'half',
    });
    expect(response.status).toBe(201);
    expect(h.agentMemory.callsOf('CreateAgent').at(-1)?.traceId).toBe(traceId);
  });
});
