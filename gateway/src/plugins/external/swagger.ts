import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import fp from 'fastify-plugin';
import { createJsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';

const DESCRIPTION = [
  'The REST API of the agent platform (spec/agent-platform-api.md, with spec/decisions.md).',
  '',
  'Every path is listed under its canonical prefix `/api/v1`. The prefix `/v1` is an exact alias:',
  'the same operations answer there, with the same requests and responses, and are not listed twice.',
  '',
  'Authenticate with `Authorization: Bearer <credential>`: an access token from `/auth/login` or',
  '`/auth/refresh`, or an API key (`ap_live_…`). Failures use one flat body (the `Error` schema).',
  'Authenticated responses carry `X-RateLimit-Limit`, `X-RateLimit-Remaining` and `X-RateLimit-Reset`.',
].join('\n');

/**
 * OpenAPI 3.1 from the routes' zod schemas. Registered before the routes, since it collects them
 * as they are added. The document is served at /openapi.json (routes/openapi.ts) and /docs.
 */
export default fp(
  async (app) => {
    await app.register(swagger, {
      openapi: {
        openapi: '3.1.0',
        info: { title: 'Agent Platform API', version: '1.0.0', description: DESCRIPTION },
        servers: [{ url: app.config.PUBLIC_BASE_URL }],
        tags: [
          { name: 'auth', description: 'Registration, login, tokens and the current user' },
          { name: 'api-keys', description: 'API keys of the tenant (access tokens only)' },
          { name: 'billing', description: 'Credits, ledger and purchases' },
          { name: 'members', description: 'Members of a tenant (access tokens only)' },
          { name: 'agents', description: 'Agents of the tenant, chatting with them (JSON or server-sent events) and their sessions' },
          { name: 'memory', description: "Agents' memory: items, documents, hybrid search and consolidation" },
          { name: 'webhooks', description: 'Webhook endpoints of the tenant, their signing secrets and delivery log' },
          {
            name: 'workflows',
            description:
              "Workflows of the tenant (graphs of webhook, schedule, agent, condition and integration nodes), their lifecycle and executions. Each workflow's webhook_url (POST, JSON body) starts an execution while it is active.",
          },
          { name: 'operations', description: 'Liveness and readiness probes' },
        ],
        components: {
          securitySchemes: {
            bearerAuth: {
              type: 'http',
              scheme: 'bearer',
              description: 'An access token (JWT) from /auth/login or /auth/refresh, or an API key ap_live_….',
            },
          },
        },
      },
      transform: createJsonSchemaTransform({ skipList: ['/openapi.json'] }),
      transformObject: jsonSchemaTransformObject,
    });
    await app.register(swaggerUi, { routePrefix: '/docs' });
  },
  { name: 'swagger', dependencies: ['config'] },
);
