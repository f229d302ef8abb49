import fp from 'fastify-plugin';
import { RateLimiter } from '../../limits/rate-limiter.js';

/** decisions §9 limits over the configured RateLimitStore; `now` (epoch milliseconds) dates Retry-After. */
export default fp(
  (app, options: { now: () => number }, done) => {
    app.decorate('rateLimiter', new RateLimiter(app.rateLimitStore, app.config, options.now));
    done();
  },
  { name: 'rate-limits', dependencies: ['config', 'stores'] },
);
