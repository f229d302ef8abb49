import type { Handlers } from '@agent-platform/kit/grpc';
import type { AuthServiceService } from '@agent-platform/proto/identity/v1/auth';
import type { ApiKeysService } from '../api-keys/api-keys.service.js';
import { present } from '@agent-platform/kit/grpc';
import type { TenantsService } from '../tenants/tenants.service.js';
import type { UsersService } from '../users/users.service.js';
import type { AuthService } from './auth.service.js';

export const AUTH_SERVICE_NAME = 'agentplatform.identity.v1.AuthService';

export interface AuthHandlerServices {
  auth: AuthService;
  users: UsersService;
  apiKeys: ApiKeysService;
  tenants: TenantsService;
}

/**
 * AuthService over gRPC. Its calls carry no principal: they are how the gateway turns a password,
 * a refresh token, an access token's subject or an API key into one.
 */
export function authHandlers({ auth, users, apiKeys, tenants }: AuthHandlerServices): Handlers<typeof AuthServiceService> {
  return {
    register: async (request) => {
      const { user, tenantId, credits } = await users.register({
        email: request.email,
        password: request.password,
        fullName: request.fullName,
        company: request.company,
      });
      return { id: user.id, email: user.email, fullName: user.fullName, tenantId, credits, createdAt: user.createdAt };
    },

    login: async (request) => ({ tokens: await auth.login(request.email, request.password) }),

    refresh: async (request) => ({ tokens: await auth.refresh(request.refreshToken) }),

    getJwks: async () => ({ keys: await auth.jwks() }),

    authenticateApiKey: async (request) => {
      const principal = await apiKeys.authenticate(request.secret);
      return { ...principal, expiresAt: principal.expiresAt ?? undefined };
    },

    confirmApiKey: async (request) => {
      const { tenantId, userId, role, scopes } = await apiKeys.confirm(request.apiKeyId);
      return { tenantId, userId, role, scopes };
    },

    resolveMembership: async (request) => tenants.resolveMembership(request.userId, present(request.tenantId)),
    getTenantPlan: async (request) => ({ plan: await tenants.planOf(request.tenantId) }),
  };
}
