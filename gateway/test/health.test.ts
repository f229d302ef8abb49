import { createLogger, DomainError } from '@agent-platform/kit';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildGateway, loadGatewayConfig } from '../src/gateway.js';
import { startHarness, type Harness } from './support/harness.js';
import { TEST_REDIS_URL as REDIS_URL, uniquePrefix } from './support/redis.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});
afterEach(() => {
  for (const backend of [h.identity, h.agentMemory, h.webhooks, h.workflowRunner]) backend.heal();
});

/** What the gateway's channel reports for a service that stopped: it cannot connect. */
const unreachable = new DomainError('service_unavailable', 'connect ECONNREFUSED');

describe('GET /healthz', () => {
  it('answers while the process lives, without credentials', async () => {
    const response = await h.app.inject({ method: 'GET', url: '/healthz' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ status: 'ok' });
    expect(response.headers['x-ratelimit-limit']).toBeUndefined();
  });
});

describe('GET /readyz', () => {
  it('is ready when identity, agent-memory, the webhook-dispatcher and the workflow-runner serve; Redis is reported as not configured', async () => {
    const response = await h.app.inject({ method: 'GET', url: '/readyz' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ status: 'ready', checks: { identity: 'ok', 'agent-memory': 'ok', 'webhook-dispatcher': 'ok', 'workflow-runner': 'ok', redis: 'not_configured' } });
  });

  // Starts a platform of its own, which takes most of the default 5 s alone and more on a busy machine.
  it('checks Redis when configured', { timeout: 30_000 }, async () => {
    const withRedis = await startHarness({ REDIS_URL, REDIS_KEY_PREFIX: uniquePrefix() });
    try {
      const response = await withRedis.app.inject({ method: 'GET', url: '/readyz' });
      expect(response.json()).toEqual({ status: 'ready', checks: { identity: 'ok', 'agent-memory': 'ok', 'webhook-dispatcher': 'ok', 'workflow-runner': 'ok', redis: 'ok' } });
    } finally {
      await withRedis.close();
    }
  });

  it('answers 503 naming every backend that does not answer', async () => {
    // A gateway of its own, every backend's address (Redis included) a port nothing listens on.
    const closed = '127.0.0.1:1';
    const config = loadGatewayConfig({
      IDENTITY_ADDR: closed,
      AGENT_MEMORY_ADDR: closed,
      WEBHOOK_DISPATCHER_ADDR: closed,
      WORKFLOW_RUNNER_ADDR: closed,
      REDIS_URL: `redis://${closed}`,
      LOG_LEVEL: 'silent',
    });
    const broken = await buildGateway(config, { logger: createLogger({ service: 'gateway-test', level: 'silent' }) });
    try {
      const response = await broken.app.inject({ method: 'GET', url: '/readyz' });
      expect(response.statusCode).toBe(503);
      const body = response.json<{ error: string; details: { field: string }[] }>();
      expect(body.error).toBe('service_unavailable');
      expect(body.details.map((detail) => detail.field).sort()).toEqual(['agent-memory', 'identity', 'redis', 'webhook-dispatcher', 'workflow-runner']);
    } finally {
      await broken.stop();
    }
  });

  it.each([
    ['identity', () => h.identity],
    ['agent-memory', () => h.agentMemory],
    ['webhook-dispatcher', () => h.webhooks],
    ['workflow-runner', () => h.workflowRunner],
  ])('answers 503 once %s stops answering, and 200 when it is back: readiness needs every backend', async (name, backend) => {
    expect((await h.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
    backend().inject('Check', { fail: unreachable });
    const response = await h.app.inject({ method: 'GET', url: '/readyz' });
    expect(response.statusCode).toBe(503);
    expect(response.json()).toEqual({
      error: 'service_unavailable',
      message: 'Not ready.',
      details: [{ field: name, message: `The ${name} service is unreachable or not serving.` }],
    });
    backend().heal();
    expect((await h.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
  });

  it('answers 503 when a backend does not answer its health check within the probe time-out', async () => {
    h.webhooks.inject('Check', { hang: true });
    const response = await h.app.inject({ method: 'GET', url: '/readyz' });
    expect(response.statusCode).toBe(503);
    expect(response.json()).toMatchObject({ details: [{ field: 'webhook-dispatcher' }] });
  });
});
