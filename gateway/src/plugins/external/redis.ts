import { settlesWithin } from '@agent-platform/kit';
import fp from 'fastify-plugin';
import { Redis } from 'ioredis';

const ERROR_LOG_INTERVAL_MS = 30_000;

/**
 * One Redis connection for the rate-limit counters and the auth cache, when REDIS_URL is set.
 * Start does not wait for Redis: /readyz reports it, and calls that need it answer 503 meanwhile.
 */
export default fp(
  (app, _options, done) => {
    const url = app.config.REDIS_URL;
    if (!url) {
      app.decorate('redis', null);
      done();
      return;
    }
    // Fail a command fast rather than queueing it through a long outage.
    // Auto-pipelining: the commands of every request in one turn of the event loop leave in one write.
    const redis = new Redis(url, { maxRetriesPerRequest: 1, connectTimeout: 2_000, lazyConnect: false, enableAutoPipelining: true });
    let lastLoggedMs = 0;
    redis.on('error', (error: unknown) => {
      if (Date.now() - lastLoggedMs < ERROR_LOG_INTERVAL_MS) return;
      lastLoggedMs = Date.now();
      app.log.warn({ err: error }, 'redis connection error');
    });
    app.decorate('redis', redis);
    app.addHook('onClose', async () => {
      const timeoutMs = Math.min(app.config.SHUTDOWN_GRACE_MS, 2_000);
      await settlesWithin(redis.quit(), timeoutMs);
      redis.disconnect();
    });
    done();
  },
  { name: 'redis', dependencies: ['config'] },
);
