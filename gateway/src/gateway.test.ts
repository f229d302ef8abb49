import { createLogger } from '@agent-platform/kit';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildGateway, loadGatewayConfig, type Gateway } from './gateway.js';
import { IdentityDouble } from './testing/identity-double.js';
import { awayFromMinuteEdge, bearer, newAccount, newApiKey, uniquePrefix } from './testing/harness.js';

const REDIS_URL = process.env['TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379';
const logger = createLogger({ service: 'gateway-test', level: 'silent' });

let identity: IdentityDouble;
let identityAddr: string;
beforeAll(async () => {
  identity = new IdentityDouble();
  identityAddr = await identity.start();
});
afterAll(async () => {
  await identity.stop();
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
    // The JWK set was fetched at start.
    expect(gateway.app.accessTokens.keyCount).toBe(1);
    const started = Date.now();
    await gateway.stop();
    expect(Date.now() - started).toBeLessThan(config().SHUTDOWN_TIMEOUT_MS);
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
  beforeAll(async () => {
    prefix = uniquePrefix();
    const env = { REDIS_URL, REDIS_KEY_PREFIX: prefix, RATE_LIMITS: 'free:6/1000' };
    a = await buildGateway(config(env), { logger });
    b = await buildGateway(config(env), { logger });
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
    await awayFromMinuteEdge();
    const account = await newAccount(a.app);
    const me = { method: 'GET' as const, url: '/api/v1/auth/me', headers: bearer(account.token) };
    const remaining = [];
    for (const gateway of [a, b, a, b, a, b]) {
      const response = await gateway.app.inject(me);
      expect(response.statusCode).toBe(200);
      remaining.push(response.headers['x-ratelimit-remaining']);
    }
    expect(remaining).toEqual(['5', '4', '3', '2', '1', '0']);
    expect((await b.app.inject(me)).statusCode).toBe(429);
    expect((await a.app.inject(me)).statusCode).toBe(429);
  });
});
