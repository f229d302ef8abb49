import fp from 'fastify-plugin';
import type { AuthCache } from '../../adapters/auth-cache.js';
import { MemoryAuthCache } from '../../adapters/memory-auth-cache.js';
import { MemoryRateLimitStore } from '../../adapters/memory-rate-limit-store.js';
import type { RateLimitStore } from '../../adapters/rate-limit-store.js';
import { RedisAuthCache } from '../../adapters/redis-auth-cache.js';
import { RedisRateLimitStore } from '../../adapters/redis-rate-limit-store.js';

/**
 * The adapters, chosen once from the configuration: Redis when REDIS_URL is set, else in-process.
 * `now` (epoch milliseconds) places requests in rate-limit windows, on every replica alike.
 */
export default fp(
  (app, options: { now: () => number }, done) => {
    const { redis, config } = app;
    const rateLimitStore: RateLimitStore = redis
      ? new RedisRateLimitStore(redis, { prefix: config.REDIS_KEY_PREFIX, now: options.now })
      : new MemoryRateLimitStore({ now: options.now });
    const authCache: AuthCache = redis ? new RedisAuthCache(redis, { prefix: config.REDIS_KEY_PREFIX }) : new MemoryAuthCache();
    app.decorate('rateLimitStore', rateLimitStore);
    app.decorate('authCache', authCache);
    app.addHook('onClose', async () => {
      await Promise.all([rateLimitStore.close(), authCache.close()]);
    });
    app.log.info({ adapter: redis ? 'redis' : 'in-process' }, 'rate-limit store and auth cache');
    done();
  },
  { name: 'stores', dependencies: ['config', 'redis'] },
);
