import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uniquePrefix } from '../testing/harness.js';
import type { AuthCache } from './auth-cache.js';
import { MemoryAuthCache } from './memory-auth-cache.js';
import { RedisAuthCache } from './redis-auth-cache.js';

const REDIS_URL = process.env['TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379';

let redis: Redis;
beforeAll(() => {
  redis = new Redis(REDIS_URL);
});
afterAll(async () => {
  await redis.quit();
});

const implementations: [string, () => AuthCache][] = [
  ['memory', () => new MemoryAuthCache()],
  ['redis', () => new RedisAuthCache(redis, { prefix: uniquePrefix() })],
];

describe.each(implementations)('AuthCache contract: %s', (_name, create) => {
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
    const cache = create();
    await cache.set('short', 'v', 1);
    expect(await cache.get('short')).toBe('v');
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect(await cache.get('short')).toBeUndefined();
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
