import { createLogger } from '@agent-platform/kit';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildGateway, loadGatewayConfig, type Gateway } from '../src/gateway.js';
import { bearer, newAccount, newApiKey, startHarness, TestClock, type Harness } from './support/harness.js';
import { TEST_REDIS_URL as REDIS_URL, uniquePrefix } from './support/redis.js';

const logger = createLogger({ service: 'gateway-test', level: 'silent' });

// The real platform; the gateways built here reach its identity over loopback gRPC, as replicas do.
let h: Harness;
let identityAddr: string;
beforeAll(async () => {
  h = await startHarness();
  identityAddr = h.app.config.IDENTITY_ADDR;
});
afterAll(async () => {
  await h.close();
});

function config(env: Record<string, string> = {}) {
  return loadGatewayConfig({ IDENTITY_ADDR: identityAddr, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'silent', ...env });
}

describe('start and stop', () => {
  it('listens on a real port, serves HTTP and stops within its bound', async () => {
    const gateway = await buildGateway(config(), { logger });
    const { url } = await gateway.start();
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const response = await fetch(`${url}/healthz`, { headers: { 'x-request-id': 'live-1' } });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toBe('live-1');
    // The JWK set was fetched from identity at start.
    expect(gateway.app.accessTokens.keyCount).toBe(1);
    const started = Date.now();
    await gateway.stop();
    expect(Date.now() - started).toBeLessThan(config().SHUTDOWN_GRACE_MS);
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
  });

  it('drains on stop: readiness fails at once, requests meanwhile are served and close their connection, then it stops listening', async () => {
    const gateway = await buildGateway(config({ SHUTDOWN_DELAY_MS: '400' }), { logger });
    const { url } = await gateway.start();
    expect((await fetch(`${url}/healthz`)).headers.get('connection')).toBe('keep-alive');
    const stopped = gateway.stop();
    const readiness = await fetch(`${url}/readyz`);
    expect(readiness.status).toBe(503);
    expect(await readiness.json()).toMatchObject({ error: 'service_unavailable', details: [{ field: 'gateway', message: 'The gateway is shutting down.' }] });
    // Still served while the load balancer notices, each answer ending its connection.
    const served = await fetch(`${url}/healthz`);
    expect(served.status).toBe(200);
    expect(served.headers.get('connection')).toBe('close');
    await stopped;
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
  });

  it('starts even when identity is not up yet', async () => {
    const gateway = await buildGateway(config({ IDENTITY_ADDR: '127.0.0.1:1', GRPC_DEADLINE_MS: '300' }), { logger });
    const { url } = await gateway.start();
    expect((await fetch(`${url}/readyz`)).status).toBe(503);
    await gateway.stop();
  });
});

describe('replicas sharing Redis', () => {
  let a: Gateway;
  let b: Gateway;
  let redis: Redis;
  let prefix: string;
  // One clock for both replicas, as hosts in sync share the time of day.
  const clock = new TestClock();
  beforeAll(async () => {
    prefix = uniquePrefix();
    const env = { REDIS_URL, REDIS_KEY_PREFIX: prefix, RATE_LIMITS: 'free:6/1000' };
    a = await buildGateway(config(env), { logger, now: clock.now });
    b = await buildGateway(config(env), { logger, now: clock.now });
    redis = new Redis(REDIS_URL);
  });
  afterAll(async () => {
    await Promise.all([a.stop(), b.stop()]);
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  });

  it('revoking a key on one replica stops it on the other at once; no secret is stored', async () => {
    const account = await newAccount(a.app);
    const key = await newApiKey(a.app, account, ['billing:read']);
    const credits = { method: 'GET' as const, url: '/api/v1/billing/credits', headers: bearer(key.key) };
    expect((await b.app.inject(credits)).statusCode).toBe(200);
    expect((await a.app.inject(credits)).statusCode).toBe(200);
    const stored = await redis.keys(`${prefix}*`);
    expect(stored.some((name) => name.startsWith(`${prefix}auth:key:`))).toBe(true);
    for (const name of stored) {
      expect(name).not.toContain(key.key);
      if ((await redis.type(name)) === 'string') expect(await redis.get(name)).not.toContain(key.key);
    }

    const revoked = await a.app.inject({ method: 'DELETE', url: `/api/v1/auth/api-keys/${key.id}`, headers: bearer(account.token) });
    expect(revoked.statusCode).toBe(200);
    expect((await b.app.inject(credits)).statusCode).toBe(401);
  });

  it('counts a tenant once across replicas', async () => {
    const account = await newAccount(a.app);
    // A fresh minute window of the shared clock, so the six requests fall in one window.
    const windowEnd = String(Math.floor(clock.advanceToNextWindow(60) / 1000) + 60);
    const me = { method: 'GET' as const, url: '/api/v1/auth/me', headers: bearer(account.token) };
    const remaining = [];
    for (const gateway of [a, b, a, b, a, b]) {
      const response = await gateway.app.inject(me);
      expect(response.statusCode).toBe(200);
      // The window is the clock's on both replicas, not the host's or Redis' own.
      expect(response.headers['x-ratelimit-reset']).toBe(windowEnd);
      remaining.push(response.headers['x-ratelimit-remaining']);
    }
    expect(remaining).toEqual(['5', '4', '3', '2', '1', '0']);
    expect((await b.app.inject(me)).statusCode).toBe(429);
    expect((await a.app.inject(me)).statusCode).toBe(429);
  });
});
