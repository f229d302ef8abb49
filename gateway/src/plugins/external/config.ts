import fp from 'fastify-plugin';
import type { GatewayConfig } from '../../config.js';

/** The configuration parsed once in main (or by the launcher), as `app.config`. */
export default fp<{ config: GatewayConfig }>(
  (app, options, done) => {
    app.decorate('config', options.config);
    done();
  },
  { name: 'config' },
);
