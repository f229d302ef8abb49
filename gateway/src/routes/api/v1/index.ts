import type { FastifyPluginAsync } from 'fastify';
import apiKeyRoutes from './auth/api-keys/index.js';
import authRoutes from './auth/index.js';
import { apiHooks, type ApiHookOptions } from './autohooks.js';
import billingRoutes from './billing/index.js';
import memberRoutes from './tenants/_tenant_id/members/index.js';

/**
 * The versioned REST API. Registered twice, under /api/v1 (documented) and /v1 (the exact alias
 * of decisions §1), so both prefixes run the very same handlers and hooks.
 */
const api: FastifyPluginAsync<ApiHookOptions> = async (app, options) => {
  apiHooks(app, options);
  await app.register(authRoutes, { prefix: '/auth' });
  await app.register(apiKeyRoutes, { prefix: '/auth/api-keys' });
  await app.register(billingRoutes, { prefix: '/billing' });
  await app.register(memberRoutes, { prefix: '/tenants/:tenant_id/members' });
};

export default api;
