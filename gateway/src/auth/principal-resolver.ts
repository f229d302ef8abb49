import { createHash } from 'node:crypto';
import { API_KEY_SECRET_PREFIX, DomainError, type Logger } from '@agent-platform/kit';
import type { PromiseClient } from '@agent-platform/kit/grpc';
import type { AuthServiceService } from '@agent-platform/proto/identity/v1/auth';
import { z } from 'zod';
import type { AuthCache } from '../adapters/auth-cache.js';
import type { AccessTokenVerifier } from './access-tokens.js';
import type { AuthenticatedPrincipal } from './principal.js';


const cachedKey = z.object({
  apiKeyId: z.string(),
  tenantId: z.string(),
  userId: z.string(),
  role: z.string(),
  scopes: z.array(z.string()),
  plan: z.string(),
  /** Epoch milliseconds, or null for a key that never expires. */
  expiresAtMs: z.number().nullable(),
});
const cachedMembership = z.object({ tenantId: z.string(), role: z.string(), plan: z.string() });

export interface PrincipalResolverOptions {
  auth: PromiseClient<typeof AuthServiceService>;
  verifier: AccessTokenVerifier;
  cache: AuthCache;
  ttlSeconds: number;
  logger: Pick<Logger, 'warn' | 'error'>;
  now?: () => number;
}

/** Cache keys never hold a secret: an API key is known by the SHA-256 of its secret. */
const keys = {
  apiKey: (secretHash: string) => `key:${secretHash}`,
  apiKeyIndex: (apiKeyId: string) => `keyid:${apiKeyId}`,
  membership: (userId: string, tenantId: string | undefined) => `mbr:${userId}:${tenantId ?? '*'}`,
};

/**
 * Turns a bearer credential (access token or API key) and an optional requested tenant into the
 * principal a request acts as, asking identity at most once per cache TTL.
 */
export class PrincipalResolver {
  private readonly now: () => number;

  constructor(private readonly options: PrincipalResolverOptions) {
    this.now = options.now ?? Date.now;
  }

  async resolve(credential: string, requestedTenant: string | undefined, requestId: string): Promise<AuthenticatedPrincipal> {
    return credential.startsWith(API_KEY_SECRET_PREFIX)
      ? this.resolveApiKey(credential, requestedTenant, requestId)
      : this.resolveAccessToken(credential, requestedTenant, requestId);
  }

  /** A revoked key stops working at once, on every replica sharing the cache. */
  async forgetApiKey(apiKeyId: string): Promise<void> {
    const secretHash = await this.cacheGet(keys.apiKeyIndex(apiKeyId));
    const stale = [keys.apiKeyIndex(apiKeyId)];
    if (secretHash) stale.push(keys.apiKey(secretHash));
    await this.cacheDelete(...stale);
  }

  /** A role change or removal takes effect at once rather than after the TTL. */
  async forgetMembership(userId: string, tenantId: string): Promise<void> {
    await this.cacheDelete(keys.membership(userId, tenantId), keys.membership(userId, undefined));
  }

  private async resolveAccessToken(token: string, requestedTenant: string | undefined, requestId: string): Promise<AuthenticatedPrincipal> {
    const { userId } = await this.options.verifier.verify(token);
    const cacheKey = keys.membership(userId, requestedTenant);
    let membership = await this.cacheRead(cacheKey, cachedMembership);
    if (!membership) {
      const answer = await this.options.auth.resolveMembership(
        requestedTenant === undefined ? { userId } : { userId, tenantId: requestedTenant },
        { requestId },
      );
      membership = { tenantId: answer.tenantId, role: answer.role, plan: answer.plan };
      await this.cacheSet(cacheKey, membership);
    }
    return { kind: 'user', userId, apiKeyId: undefined, scopes: [], ...membership };
  }

  private async resolveApiKey(secret: string, requestedTenant: string | undefined, requestId: string): Promise<AuthenticatedPrincipal> {
    const secretHash = createHash('sha256').update(secret).digest('hex');
    const cacheKey = keys.apiKey(secretHash);
    let key = await this.cacheRead(cacheKey, cachedKey);
    if (key && key.expiresAtMs !== null && key.expiresAtMs <= this.now()) {
      await this.cacheDelete(cacheKey);
      throw new DomainError('unauthorized', 'The API key has expired.');
    }
    if (!key) {
      const answer = await this.options.auth.authenticateApiKey({ secret }, { requestId });
      key = {
        apiKeyId: answer.apiKeyId,
        tenantId: answer.tenantId,
        userId: answer.userId,
        role: answer.role,
        scopes: answer.scopes,
        plan: answer.plan,
        expiresAtMs: answer.expiresAt ? answer.expiresAt.getTime() : null,
      };
      await this.cacheSet(cacheKey, key);
      await this.cacheSet(keys.apiKeyIndex(key.apiKeyId), secretHash);
    }
    if (requestedTenant !== undefined && requestedTenant !== key.tenantId) {
      throw new DomainError('forbidden', 'This API key belongs to another tenant.');
    }
    return {
      kind: 'api_key',
      userId: key.userId,
      apiKeyId: key.apiKeyId,
      tenantId: key.tenantId,
      role: key.role,
      scopes: key.scopes,
      plan: key.plan,
    };
  }

  /** The cache only saves calls: when it fails, identity answers instead. */
  private async cacheGet(key: string): Promise<string | undefined> {
    try {
      return await this.options.cache.get(key);
    } catch (error) {
      this.options.logger.warn({ err: error }, 'auth cache read failed');
      return undefined;
    }
  }

  private async cacheRead<T>(key: string, schema: z.ZodType<T>): Promise<T | undefined> {
    const raw = await this.cacheGet(key);
    if (raw === undefined) return undefined;
    try {
      return schema.safeParse(JSON.parse(raw)).data;
    } catch {
      return undefined;
    }
  }

  /** Failing to forget is logged, not thrown: the change itself succeeded and the TTL bounds it. */
  private async cacheDelete(...cacheKeys: string[]): Promise<void> {
    try {
      await this.options.cache.delete(...cacheKeys);
    } catch (error) {
      this.options.logger.error({ err: error }, 'auth cache delete failed; stale entries live until their TTL');
    }
  }

  private async cacheSet(key: string, value: unknown): Promise<void> {
    try {
      await this.options.cache.set(key, typeof value === 'string' ? value : JSON.stringify(value), this.options.ttlSeconds);
    } catch (error) {
      this.options.logger.warn({ err: error }, 'auth cache write failed');
    }
  }
}
