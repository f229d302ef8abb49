import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, uniquePrefix, type Harness } from '../testing/harness.js';

const REDIS_URL = process.env['TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

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

  it('checks Redis when configured', async () => {
    const withRedis = await startHarness({ REDIS_URL, REDIS_KEY_PREFIX: uniquePrefix() });
    try {
      const response = await withRedis.app.inject({ method: 'GET', url: '/readyz' });
      expect(response.json()).toEqual({ status: 'ready', checks: { identity: 'ok', 'agent-memory': 'ok', 'webhook-dispatcher': 'ok', 'workflow-runner': 'ok', redis: 'ok' } });
    } finally {
      await withRedis.close();
    }
  });

  it('answers 503 naming every backend that does not answer', async () => {
    const broken = await startHarness({
      IDENTITY_ADDR: '127.0.0.1:1',
      AGENT_MEMORY_ADDR: '127.0.0.1:1',
      WEBHOOK_DISPATCHER_ADDR: '127.0.0.1:1',
      WORKFLOW_RUNNER_ADDR: '127.0.0.1:1',
      REDIS_URL: 'redis://127.0.0.1:1',
    });
    try {
      const response = await broken.app.inject({ method: 'GET', url: '/readyz' });
      expect(response.statusCode).toBe(503);
      const body = response.json<{ error: string; details: { field: string }[] }>();
      expect(body.error).toBe('service_unavailable');
      expect(body.details.map((detail) => detail.field).sort()).toEqual(['agent-memory', 'identity', 'redis', 'webhook-dispatcher', 'workflow-runner']);
    } finally {
      await broken.close();
    }
  });

  it('answers 503 once identity stops serving', async () => {
    const stopping = await startHarness();
    try {
      expect((await stopping.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
      await stopping.identity.stop();
      const response = await stopping.app.inject({ method: 'GET', url: '/readyz' });
      expect(response.statusCode).toBe(503);
      expect(response.json()).toMatchObject({ details: [{ field: 'identity' }] });
    } finally {
      await stopping.gateway.stop();
      await Promise.all([stopping.agentMemory.stop(), stopping.webhooks.stop()]);
    }
  });

  it('answers 503 once agent-memory stops serving', async () => {
    const stopping = await startHarness();
    try {
      expect((await stopping.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
      await stopping.agentMemory.stop();
      const response = await stopping.app.inject({ method: 'GET', url: '/readyz' });
      expect(response.statusCode).toBe(503);
      expect(response.json()).toEqual({
        error: 'service_unavailable',
        message: 'Not ready.',
        details: [{ field: 'agent-memory', message: 'The agent-memory service is unreachable or not serving.' }],
      });
    } finally {
      await stopping.gateway.stop();
      await Promise.all([stopping.identity.stop(), stopping.webhooks.stop()]);
    }
  });

  it('answers 503 once the webhook-dispatcher stops serving: readiness needs every backend', async () => {
    const stopping = await startHarness();
    try {
      expect((await stopping.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
      await stopping.webhooks.stop();
      const response = await stopping.app.inject({ method: 'GET', url: '/readyz' });
      expect(response.statusCode).toBe(503);
      expect(response.json()).toEqual({
        error: 'service_unavailable',
        message: 'Not ready.',
        details: [{ field: 'webhook-dispatcher', message: 'The webhook-dispatcher service is unreachable or not serving.' }],
      });
    } finally {
      await stopping.gateway.stop();
      await Promise.all([stopping.identity.stop(), stopping.agentMemory.stop()]);
    }
  });
});
