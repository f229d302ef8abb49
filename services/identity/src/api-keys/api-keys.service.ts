import { DomainError, FieldErrors, isId, newId, requireUser, type Actor, type Page } from '@agent-platform/kit';
import { characterCount } from '../shared/validation.js';
import type { Plan } from '../tenants/plans.js';
import type { Role } from '../tenants/tenants.entity.js';
import type { TenantsRepository } from '../tenants/tenants.repository.js';
import type { UsersRepository } from '../users/users.repository.js';
import type { ApiKey } from './api-keys.entity.js';
import type { ApiKeysRepository } from './api-keys.repository.js';
import { checkScopes } from './scopes.js';
import { hashApiKeySecret, isApiKeySecret, newApiKeySecret } from './secrets.js';

const MAX_NAME_LENGTH = 100;
/** decisions §4: `last_used_at` moves at most once a minute per key. */
export const LAST_USED_RESOLUTION_MS = 60_000;

export interface ApiKeysServiceOptions {
  apiKeys: ApiKeysRepository;
  tenants: TenantsRepository;
  users: UsersRepository;
}

export interface ApiKeyRequest {
  name: string;
  scopes: readonly string[];
  expiresAt: Date | undefined;
}

/** What a key secret resolves to: the principal the gateway forwards for it. */
export interface ApiKeyPrincipal {
  apiKeyId: string;
  tenantId: string;
  userId: string;
  /** The creator's current role in the tenant. */
  role: Role;
  scopes: string[];
  expiresAt: Date | null;
  plan: Plan;
}

const UNAUTHORIZED = 'The API key is invalid, expired or revoked.';

export class ApiKeysService {
  private readonly options: ApiKeysServiceOptions;

  constructor(options: ApiKeysServiceOptions) {
    this.options = options;
  }

  /** Creates a key in the actor's tenant; the secret is returned here once and only its hash kept. */
  async create(actor: Actor, request: ApiKeyRequest, now = new Date()): Promise<{ apiKey: ApiKey; secret: string }> {
    requireUser(actor, 'admin');
    const errors = new FieldErrors();
    const name = request.name.trim();
    if (name === '') errors.add('name', 'is required');
    else if (characterCount(name) > MAX_NAME_LENGTH) errors.add('name', `must be at most ${MAX_NAME_LENGTH} characters`);
    const { scopes, errors: scopeErrors } = checkScopes(request.scopes);
    for (const error of scopeErrors) errors.add(error.field, error.message);
    if (request.expiresAt !== undefined && request.expiresAt.getTime() <= now.getTime()) errors.add('expires_at', 'must be in the future');
    errors.throwIfAny();

    const { secret, keyPrefix, hash } = newApiKeySecret();
    const apiKey = await this.options.apiKeys.insert({
      id: newId('apiKey'),
      tenantId: actor.tenantId,
      createdBy: actor.userId,
      name,
      keyPrefix,
      keyHash: hash,
      scopes,
      expiresAt: request.expiresAt ?? null,
      createdAt: now,
    });
    return { apiKey, secret };
  }

  list(actor: Actor, page: Page): Promise<{ items: ApiKey[]; total: number }> {
    requireUser(actor, 'admin');
    return this.options.apiKeys.listLive(actor.tenantId, page.perPage, page.offset);
  }

  /** Unknown, already revoked and other tenants' keys all answer not_found (existence is not revealed). */
  async revoke(actor: Actor, apiKeyId: string): Promise<void> {
    requireUser(actor, 'admin');
    if (!(await this.options.apiKeys.revoke(actor.tenantId, apiKeyId, new Date()))) throw DomainError.notFound('API key');
  }

  /**
   * Resolves a secret to the principal it acts as. Every failure is the same unauthorized: an
   * unknown, revoked or expired key, or one whose creator has left the tenant or been deactivated.
   */
  async authenticate(secret: string, now = new Date()): Promise<ApiKeyPrincipal> {
    if (!isApiKeySecret(secret)) throw new DomainError('unauthorized', UNAUTHORIZED);
    const key = await this.options.apiKeys.findByHash(hashApiKeySecret(secret));
    const principal = await this.principalOf(key, now);
    const lastUsedAt = key?.lastUsedAt ?? null;
    if (lastUsedAt === null || now.getTime() - lastUsedAt.getTime() >= LAST_USED_RESOLUTION_MS) {
      await this.options.apiKeys.touch(principal.apiKeyId, now, LAST_USED_RESOLUTION_MS);
    }
    return principal;
  }

  /**
   * What a key authenticated earlier acts as now, by its id (decisions §12: work that outlives the
   * request, as a turn's next tool call, stops once its key is revoked). Not a use of the key:
   * `last_used_at` stays as it is.
   */
  async confirm(apiKeyId: string, now = new Date()): Promise<ApiKeyPrincipal> {
    return this.principalOf(isId('apiKey', apiKeyId) ? await this.options.apiKeys.findById(apiKeyId) : null, now);
  }

  /** The key's principal, or unauthorized for a key that is missing, revoked, expired or whose creator left. */
  private async principalOf(key: ApiKey | null, now: Date): Promise<ApiKeyPrincipal> {
    if (!key || key.revokedAt !== null || (key.expiresAt !== null && key.expiresAt.getTime() <= now.getTime())) {
      throw new DomainError('unauthorized', UNAUTHORIZED);
    }
    const membership = await this.options.tenants.findMembership(key.tenantId, key.createdBy);
    const creator = membership ? await this.options.users.findById(key.createdBy) : null;
    const tenant = creator ? await this.options.tenants.findTenant(key.tenantId) : null;
    if (!membership || !creator?.isActive || !tenant) throw new DomainError('unauthorized', UNAUTHORIZED);
    return {
      apiKeyId: key.id,
      tenantId: key.tenantId,
      userId: key.createdBy,
      role: membership.role,
      scopes: key.scopes,
      expiresAt: key.expiresAt,
      plan: tenant.plan,
    };
  }
}
