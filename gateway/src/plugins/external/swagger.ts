import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import fp from 'fastify-plugin';
import { createJsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import { withOptionalBodies } from '../../openapi/optional-bodies.js';
import { withUploadForms } from '../../openapi/upload-forms.js';
import { withSuccessDescriptions } from '../../openapi/success-descriptions.js';
import { withoutUnusedSchemas } from '../../openapi/unused-schemas.js';

const DESCRIPTION = [
  'The REST API of the agent platform (the API specification, with docs/decisions.md).',
  '',
  'Every path is listed under its canonical prefix `/api/v1`. The prefix `/v1` is an exact alias:',
  'the same operations answer there, with the same requests and responses, and are not listed twice.',
  '',
  'Authenticate with `Authorization: Bearer <credential>`: an access token from `/auth/login` or',
  '`/auth/refresh` (bearerAuth), or, where an operation allows it, an API key `ap_live_…` (apiKeyAuth,',
  'listed with the scope the key must hold). Failures use one flat body (the `Error` schema), and each',
  'operation lists the statuses it can answer.',
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
        info: {
          title: 'Agent Platform API',
          version: '1.0.0',
          description: DESCRIPTION,
          license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
        },
        // Relative first: the gateway that serves this document. The document does not depend on
        // the deployment, so the committed openapi.json is exactly what every gateway serves.
        servers: [
          { url: '/', description: 'The gateway serving this document' },
          {
            url: '{base_url}',
            description: 'A gateway at its public address',
            variables: { base_url: { default: 'http://localhost:8080', description: "The deployment's PUBLIC_BASE_URL" } },
          },
        ],
        tags: [
          { name: 'auth', description: 'Registration, login, tokens and the current user' },
          { name: 'api-keys', description: 'API keys of the tenant (access tokens only)' },
          { name: 'billing', description: 'Credits, ledger and purchases' },
          { name: 'members', description: 'Members of a tenant (access tokens only)' },
          { name: 'agents', description: 'Agents of the tenant, chatting with them (JSON or server-sent events) and their sessions' },
          { name: 'tools', description: 'Tools of the tenant that agents may call: HTTP endpoints (header values kept secret) and workflows' },
          { name: 'runs', description: 'Runs: every agent turn with its steps (retrieval, model rounds, tool calls, approvals, extraction), feedback and stats' },
          { name: 'memory', description: "Agents' memory: items, documents, hybrid search and consolidation" },
          { name: 'datasets', description: 'Datasets of the tenant: inputs to evaluate agents on, each with what it should answer' },
          { name: 'evals', description: 'Evals: an agent run on every item of a dataset, each output scored; summaries and comparisons' },
          { name: 'webhooks', description: 'Webhook endpoints of the tenant, their signing secrets and delivery log' },
          {
            name: 'workflows',
            description:
              "Workflows of the tenant (graphs of webhook, schedule, agent, condition and integration nodes), their lifecycle and executions. Each workflow's webhook_url (POST, JSON body) starts an execution while it is active.",
          },
          {
            name: 'mcp',
            description:
              'The platform as an MCP server (Model Context Protocol, Streamable HTTP, stateless): its agents, memory and workflows as tools for MCP clients, with the same credentials, scopes and rate limit as the REST API',
          },
          { name: 'operations', description: 'Liveness and readiness probes' },
        ],
        components: {
          securitySchemes: {
            bearerAuth: {
              type: 'http',
              scheme: 'bearer',
              bearerFormat: 'JWT',
              description: 'An access token (JWT, 3,600 s) from /auth/login or /auth/refresh. It acts with your role in the tenant.',
            },
            apiKeyAuth: {
              type: 'http',
              scheme: 'bearer',
              bearerFormat: 'ap_live_…',
              description:
                "An API key, sent as `Authorization: Bearer ap_live_…`. It acts in its own tenant with its creator's role narrowed to its scopes; an operation lists the scope it needs.",
            },
          },
        },
      },
      transform: createJsonSchemaTransform({ skipList: ['/openapi.json'] }),
      transformObject: (document) => withUploadForms(withOptionalBodies(withSuccessDescriptions(withoutUnusedSchemas(jsonSchemaTransformObject(document))))),
    });
    await app.register(swaggerUi, { routePrefix: '/docs' });
  },
  { name: 'swagger' },
);
