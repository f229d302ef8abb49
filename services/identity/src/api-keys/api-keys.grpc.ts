import { actorOf, type Handlers } from '@agent-platform/kit/grpc';
import type { ApiKeyServiceService, ApiKey as ApiKeyMessage } from '@agent-platform/proto/identity/v1/api-keys';
import { parsePage } from '@agent-platform/kit';
import type { ApiKey } from './api-keys.entity.js';
import type { ApiKeysService } from './api-keys.service.js';

export const API_KEY_SERVICE_NAME = 'agentplatform.identity.v1.ApiKeyService';

/** ApiKeyService over gRPC: the keys of the principal's tenant. */
export function apiKeyHandlers(apiKeys: ApiKeysService): Handlers<typeof ApiKeyServiceService> {
  return {
    createApiKey: async (request, ctx) => {
      const { apiKey, secret } = await apiKeys.create(actorOf(ctx), {
        name: request.name,
        scopes: request.scopes,
        expiresAt: request.expiresAt,
      });
      return { apiKey: toMessage(apiKey), secret };
    },

    listApiKeys: async (request, ctx) => {
      const { items, total } = await apiKeys.list(actorOf(ctx), parsePage(request.page));
      return { items: items.map(toMessage), total };
    },

    revokeApiKey: async (request, ctx) => {
      await apiKeys.revoke(actorOf(ctx), request.apiKeyId);
      return {};
    },
  };
}

export function toMessage(key: ApiKey): ApiKeyMessage {
  return {
    id: key.id,
    name: key.name,
    keyPrefix: key.keyPrefix,
    scopes: key.scopes,
    expiresAt: key.expiresAt ?? undefined,
    createdAt: key.createdAt,
    lastUsedAt: key.lastUsedAt ?? undefined,
  };
}
