import type { FastifyPluginAsync } from 'fastify';
import chatRoutes from './agents/_agent_id/chat/index.js';
import workflowRoutes from './workflows/index.js';
import workflowItemRoutes from './workflows/_workflow_id/index.js';
import executionRoutes from './workflows/_workflow_id/executions/index.js';
import agentItemRoutes from './agents/_agent_id/index.js';
import agentMemoryRoutes from './agents/_agent_id/memory/index.js';
import sessionRoutes from './agents/_agent_id/sessions/index.js';
import agentRoutes from './agents/index.js';
import apiKeyRoutes from './auth/api-keys/index.js';
import authRoutes from './auth/index.js';
import { apiHooks, type ApiHookOptions } from './autohooks.js';
import billingRoutes from './billing/index.js';
import documentRoutes from './memory/documents/index.js';
import memoryRoutes from './memory/index.js';
import memberRoutes from './tenants/_tenant_id/members/index.js';
import deliveryRoutes from './webhooks/_webhook_id/deliveries/index.js';
import webhookItemRoutes from './webhooks/_webhook_id/index.js';
import webhookRoutes from './webhooks/index.js';

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
  await app.register(agentRoutes, { prefix: '/agents' });
  await app.register(agentItemRoutes, { prefix: '/agents/:agent_id' });
  await app.register(chatRoutes, { prefix: '/agents/:agent_id/chat' });
  await app.register(sessionRoutes, { prefix: '/agents/:agent_id/sessions' });
  await app.register(agentMemoryRoutes, { prefix: '/agents/:agent_id/memory' });
  await app.register(memoryRoutes, { prefix: '/memory' });
  await app.register(documentRoutes, { prefix: '/memory/documents' });
  await app.register(webhookRoutes, { prefix: '/webhooks' });
  await app.register(webhookItemRoutes, { prefix: '/webhooks/:webhook_id' });
  await app.register(deliveryRoutes, { prefix: '/webhooks/:webhook_id/deliveries' });
  await app.register(workflowRoutes, { prefix: '/workflows' });
  await app.register(workflowItemRoutes, { prefix: '/workflows/:workflow_id' });
  await app.register(executionRoutes, { prefix: '/workflows/:workflow_id/executions' });
};

export default api;
