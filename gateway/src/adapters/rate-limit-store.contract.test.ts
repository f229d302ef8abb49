import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_REDIS_URL, uniquePrefix } from '../../test/support/redis.js';
import { MemoryRateLimitStore } from './memory-rate-limit-store.js';
import type { RateLimitStore } from './rate-limit-store.js';
import { RedisRateLimitStore } from './redis-rate-limit-store.js';

/** A controllable clock (epoch ms), starting 10 s into a minute, in the middle of a day. */
class Clock {
  ms = Date.UTC(2026, 0, 15, 12, 30, 10);
  readonly now = () => this.ms;
}

let redis: Redis;
beforeAll(() => {
  redis = new Redis(TEST_REDIS_URL);
});
afterAll(async () => {
  await redis.quit();
});

const implementations: [string, (clock: Clock) => RateLimitStore][] = [
  ['memory', (clock) => new MemoryRateLimitStore({ now: clock.now })],
  ['redis', (clock) => new RedisRateLimitStore(redis, { prefix: uniquePrefix(), now: clock.now })],
];

describe.each(implementations)('RateLimitStore contract: %s', (_name, create) => {
  const minute = { seconds: 60, limit: 3 };
  const day = { seconds: 86_400, limit: 5 };

  it('counts requests up to the limit, then refuses without counting', async () => {
    const clock = new Clock();
    const store = create(clock);
    const counts = [];
    for (let n = 0; n < 3; n += 1) {
      const outcome = await store.consume('tenant:a', [minute]);
      expect(outcome.allowed).toBe(true);
      counts.push(outcome.windows[0]?.remaining);
    }
    expect(counts).toEqual([2, 1, 0]);
    const refused = await store.consume('tenant:a', [minute]);
    expect(refused.allowed).toBe(false);
    expect(refused.windows[0]).toEqual({ limit: 3, count: 3, remaining: 0, resetAt: Math.ceil(Date.UTC(2026, 0, 15, 12, 31) / 1000) });
    await store.close();
  });

  it('keeps keys apart', async () => {
    const clock = new Clock();
    const store = create(clock);
    for (let n = 0; n < 3; n += 1) await store.consume('tenant:a', [minute]);
    expect((await store.consume('tenant:b', [minute])).windows[0]?.count).toBe(1);
    await store.close();
  });

  it('starts a fresh fixed window when the minute turns', async () => {
    const clock = new Clock();
    const store = create(clock);
    for (let n = 0; n < 3; n += 1) await store.consume('k', [minute]);
    expect((await store.consume('k', [minute])).allowed).toBe(false);
    clock.ms += 50_000; // 12:31:00
    const fresh = await store.consume('k', [minute]);
    expect(fresh).toMatchObject({ allowed: true, windows: [{ count: 1, remaining: 2 }] });
    expect(fresh.windows[0]?.resetAt).toBe(Math.ceil(Date.UTC(2026, 0, 15, 12, 32) / 1000));
    await store.close();
  });

  it('counts every window or none: a full day window refuses and leaves the minute untouched', async () => {
    const clock = new Clock();
    const store = create(clock);
    for (let n = 0; n < 5; n += 1) {
      expect((await store.consume('k', [minute, day])).allowed).toBe(true);
      if (n === 2) clock.ms += 60_000; // the minute window would refuse the 4th
    }
    const refused = await store.consume('k', [minute, day]);
    expect(refused.allowed).toBe(false);
    expect(refused.windows.map((window) => window.count)).toEqual([2, 5]);
    const peeked = await store.peek('k', [minute, day]);
    expect(peeked.windows.map((window) => window.count)).toEqual([2, 5]);
    expect(refused.windows[1]?.resetAt).toBe(Math.ceil(Date.UTC(2026, 0, 16) / 1000));
    await store.close();
  });

  it('peek counts nothing and tells whether one more would be allowed', async () => {
    const clock = new Clock();
    const store = create(clock);
    expect(await store.peek('p', [minute])).toMatchObject({ allowed: true, windows: [{ count: 0, remaining: 3 }] });
    await store.consume('p', [minute], 3);
    expect(await store.peek('p', [minute])).toMatchObject({ allowed: false, windows: [{ count: 3, remaining: 0 }] });
    expect((await store.peek('p', [minute])).windows[0]?.count).toBe(3);
    await store.close();
  });

  it('is atomic under concurrency: exactly the limit is admitted', async () => {
    const clock = new Clock();
    const store = create(clock);
    const wide = { seconds: 60, limit: 25 };
    const outcomes = await Promise.all(Array.from({ length: 60 }, () => store.consume('race', [wide])));
    expect(outcomes.filter((outcome) => outcome.allowed)).toHaveLength(25);
    await store.close();
  });
});

describe('MemoryRateLimitStore', () => {
  it('sweeps expired windows', async () => {
    const clock = new Clock();
    const store = new MemoryRateLimitStore({ now: clock.now });
    await store.consume('a', [{ seconds: 60, limit: 5 }]);
    await store.consume('b', [{ seconds: 3600, limit: 5 }]);
    expect(store.size).toBe(2);
    clock.ms += 60_000;
    store.sweep();
    expect(store.size).toBe(1);
    await store.close();
  });
});

describe('RedisRateLimitStore', () => {
  it('expires its counters with the window', async () => {
    const prefix = uniquePrefix();
    const store = new RedisRateLimitStore(redis, { prefix });
    await store.consume('ttl', [{ seconds: 60, limit: 5 }]);
    const [key] = await redis.keys(`${prefix}*`);
    expect(key).toBeDefined();
    const ttl = await redis.pttl(key ?? '');
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60_000);
    await redis.del(key ?? '');
  });

  it('answers 503 service_unavailable when Redis is down', async () => {
    const dead = new Redis('redis://127.0.0.1:1', { maxRetriesPerRequest: 0, lazyConnect: true, retryStrategy: () => null });
    dead.on('error', () => undefined);
    const store = new RedisRateLimitStore(dead, { prefix: uniquePrefix() });
    await expect(store.consume('x', [{ seconds: 60, limit: 5 }])).rejects.toMatchObject({ code: 'service_unavailable' });
    dead.disconnect();
  });
});
