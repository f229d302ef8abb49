import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_REDIS_URL, uniquePrefix } from '../../test/support/redis.js';
import type { AuthCache } from './auth-cache.js';
import { MemoryAuthCache } from './memory-auth-cache.js';
import { RedisAuthCache } from './redis-auth-cache.js';

let redis: Redis;
beforeAll(() => {
  redis = new Redis(TEST_REDIS_URL);
});
afterAll(async () => {
  await redis.quit();
});

/** A cache, and how a test outlasts an entry's TTL on that cache's own clock. */
interface Subject {
  cache: AuthCache;
  outlast: (key: string, ttlSeconds: number) => Promise<void>;
}

const implementations: [string, () => Subject][] = [
  [
    'memory',
    () => {
      let now = 1_000;
      return {
        cache: new MemoryAuthCache({ now: () => now }),
        outlast: (_key, ttlSeconds) => Promise.resolve(void (now += ttlSeconds * 1_000 + 1)),
      };
    },
  ],
  [
    'redis',
    () => {
      const prefix = uniquePrefix();
      return {
        cache: new RedisAuthCache(redis, { prefix }),
        // Redis keeps the clock: the entry must carry the TTL, and Redis expires it when that runs
        // out (moved to the past here rather than waited for).
        outlast: async (key, ttlSeconds) => {
          const stored = `${prefix}auth:${key}`;
          const ttlMs = await redis.pttl(stored);
          expect(ttlMs).toBeGreaterThan(0);
          expect(ttlMs).toBeLessThanOrEqual(ttlSeconds * 1_000);
          await redis.pexpireat(stored, 1);
        },
      };
    },
  ],
];

describe.each(implementations)('AuthCache contract: %s', (_name, subject) => {
  const create = () => subject().cache;
  it('returns what was set, and undefined for what was not', async () => {
    const cache = create();
    await cache.set('a', '{"x":1}', 30);
    expect(await cache.get('a')).toBe('{"x":1}');
    expect(await cache.get('b')).toBeUndefined();
    await cache.close();
  });

  it('overwrites and deletes several keys at once', async () => {
    const cache = create();
    await cache.set('a', 'one', 30);
    await cache.set('a', 'two', 30);
    await cache.set('b', 'three', 30);
    expect(await cache.get('a')).toBe('two');
    await cache.delete('a', 'b', 'never-set');
    expect(await cache.get('a')).toBeUndefined();
    expect(await cache.get('b')).toBeUndefined();
    await cache.delete();
    await cache.close();
  });

  it('forgets entries after their TTL', async () => {
    const { cache, outlast } = subject();
    await cache.set('short', 'v', 1);
    await cache.set('long', 'w', 30);
    expect(await cache.get('short')).toBe('v');
    await outlast('short', 1);
    expect(await cache.get('short')).toBeUndefined();
    expect(await cache.get('long')).toBe('w');
    await cache.close();
  });

  it('keeps caches with different prefixes or instances apart', async () => {
    const one = create();
    const two = create();
    await one.set('k', 'one', 30);
    expect(await two.get('k')).toBeUndefined();
    await Promise.all([one.close(), two.close()]);
  });
});

describe('MemoryAuthCache', () => {
  it('drops the least recently used entries beyond maxEntries', async () => {
    const cache = new MemoryAuthCache({ maxEntries: 2 });
    await cache.set('a', '1', 30);
    await cache.set('b', '2', 30);
    // Reading a makes b the least recently used.
    expect(await cache.get('a')).toBe('1');
    await cache.set('c', '3', 30);
    expect(await cache.get('b')).toBeUndefined();
    expect(await cache.get('a')).toBe('1');
    expect(await cache.get('c')).toBe('3');
  });

  it('expires entries on the clock it is given', async () => {
    let now = 1_000;
    const cache = new MemoryAuthCache({ now: () => now });
    await cache.set('k', 'v', 30);
    now += 29_999;
    expect(await cache.get('k')).toBe('v');
    now += 2;
    expect(await cache.get('k')).toBeUndefined();
  });
});
