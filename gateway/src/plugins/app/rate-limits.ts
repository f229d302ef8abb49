import fp from 'fastify-plugin';
import { RateLimiter } from '../../limits/rate-limiter.js';

/** decisions §9 limits over the configured RateLimitStore. */
export default fp(
  (app, _options, done) => {
    app.decorate('rateLimiter', new RateLimiter(app.rateLimitStore, app.config));
    done();
  },
  { name: 'rate-limits', dependencies: ['config', 'stores'] },
);
