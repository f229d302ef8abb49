import type { ApiKey } from '@agent-platform/proto/identity/v1/api-keys';
import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ALL_SCOPES, SCOPES } from '@agent-platform/kit';
import { callAs } from '../../../../../http/calls.js';
import { errorResponses } from '../../../../../http/error-responses.js';
import { iso, isoOrNull, PageQuery, pathId, pageOf, SuccessSchema, TenantQuery, Timestamp } from '../../../../../http/schemas.js';

const ScopeSchema = z.enum([...SCOPES, ALL_SCOPES]);

const CreateApiKeyBody = z.object({
  name: z.string().trim().min(1).max(100),
  scopes: z
    .array(ScopeSchema)
    .min(1)
    .max(SCOPES.length + 1)
    .describe('From the scope catalogue, or "*" for all of them. The key acts with its creator\'s role narrowed to these.'),
  expires_at: z.iso
    .datetime({ offset: true })
    .nullable()
    .optional()
    // A malformed value fails the format check alone (NaN compares false).
    .refine((value) => value == null || !(Date.parse(value) <= Date.now()), { message: 'Must be in the future.' }),
}).meta({ examples: [{ name: 'CI deployments', scopes: ['agents:read', 'workflows:execute'], expires_at: '2030-01-01T00:00:00.000Z' }] });

const CreatedApiKey = z.object({
  id: z.string(),
  name: z.string(),
  key: z.string().describe('The secret; shown this once only.'),
  key_prefix: z.string(),
  scopes: z.array(z.string()),
  created_at: Timestamp,
  expires_at: Timestamp.nullable(),
});

const ListedApiKey = z.object({
  id: z.string(),
  name: z.string(),
  key_prefix: z.string(),
  scopes: z.array(z.string()),
  last_used_at: Timestamp.nullable(),
  created_at: Timestamp,
  expires_at: Timestamp.nullable(),
});

const KeyParams = z.object({ key_id: pathId('API key', 'key') });

function listed(key: ApiKey): z.output<typeof ListedApiKey> {
  return {
    id: key.id,
    name: key.name,
    key_prefix: key.keyPrefix,
    scopes: key.scopes,
    last_used_at: isoOrNull(key.lastUsedAt),
    created_at: iso(key.createdAt),
    expires_at: isoOrNull(key.expiresAt),
  };
}

/** /auth/api-keys: keys of the caller's tenant. Access tokens only: a key cannot mint keys. */
const apiKeyRoutes: FastifyPluginCallbackZod = (app, _options, done) => {
  app.post(
    '',
    {
      schema: {
        operationId: 'createApiKey',
        tags: ['api-keys'],
        summary: 'Create an API key; the secret is in this response only',
        querystring: TenantQuery,
        body: CreateApiKeyBody,
        response: { 201: CreatedApiKey },
      },
    },
    async (request, reply) => {
      const { name, scopes, expires_at } = request.body;
      const created = await app.identity.apiKeys.createApiKey(
        { name, scopes: [...new Set(scopes)], expiresAt: expires_at ? new Date(expires_at) : undefined },
        callAs(request),
      );
      if (!created.apiKey) throw new Error('Identity answered without the created key.');
      const key = listed(created.apiKey);
      return reply.code(201).send({
        id: key.id,
        name: key.name,
        key: created.secret,
        key_prefix: key.key_prefix,
        scopes: key.scopes,
        created_at: key.created_at,
        expires_at: key.expires_at,
      });
    },
  );

  app.get(
    '',
    {
      schema: {
        operationId: 'listApiKeys',
        tags: ['api-keys'],
        summary: 'List the API keys of the tenant, newest first (revoked keys are not listed)',
        querystring: PageQuery,
        response: { 200: pageOf(ListedApiKey) },
      },
    },
    async (request) => {
      const { page, per_page } = request.query;
      const answer = await app.identity.apiKeys.listApiKeys({ page: { page, perPage: per_page } }, callAs(request));
      return { items: answer.items.map(listed), total: answer.total, page, per_page };
    },
  );

  app.delete(
    '/:key_id',
    {
      schema: {
        operationId: 'revokeApiKey',
        tags: ['api-keys'],
        summary: 'Revoke an API key; it stops working at once',
        params: KeyParams,
        querystring: TenantQuery,
        response: { 200: SuccessSchema, ...errorResponses({ not_found: 'No such key in the tenant, or it is revoked already.' }) },
      },
    },
    async (request) => {
      await app.identity.apiKeys.revokeApiKey({ apiKeyId: request.params.key_id }, callAs(request));
      await app.principals.forgetApiKey(request.params.key_id);
      return { success: true as const, message: 'API key revoked.' };
    },
  );
  done();
};

export default apiKeyRoutes;
