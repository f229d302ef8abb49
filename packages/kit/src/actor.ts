import { hasScope, roleAtLeast, type AccessRule, type Role } from './access.js';
import { DomainError } from './errors.js';

/**
 * Who acts, in which tenant: the authenticated principal the gateway forwarded, as domain code sees
 * it. Every tenant-scoped query uses `tenantId` from here, never one from a request body. Services
 * check access again rather than trust that every caller is the gateway.
 */
export interface Actor {
  kind: 'user' | 'api_key';
  /** The user, or the API key's creator. */
  userId: string;
  /** The API key, for a key: work that outlives the request asks identity whether it still holds. */
  apiKeyId?: string;
  tenantId: string;
  /** The user's role in the tenant (for a key: its creator's). */
  role: string;
  /** An API key's scopes; empty for users. */
  scopes: readonly string[];
}

export function requireRole(actor: Actor, minimum: Role): void {
  if (!roleAtLeast(actor.role, minimum)) {
    throw new DomainError('forbidden', `This action needs the ${minimum} role or higher in the tenant.`);
  }
}

/** For operations only a user may perform (decisions §4: keys cannot manage keys or members). */
export function requireUser(actor: Actor, minimum: Role): void {
  if (actor.kind !== 'user') {
    throw new DomainError('forbidden', 'This operation needs a user access token, not an API key.');
  }
  requireRole(actor, minimum);
}

/**
 * requireAccess for something that acts on the caller's behalf later (a tool, an agent node):
 * the refusal says what needs the access, e.g. "…lacks the workflows:execute scope, which a
 * workflow tool needs: …".
 */
export function requireAccessFor(actor: Actor, rule: AccessRule, needer: string): void {
  try {
    requireAccess(actor, rule);
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    throw new DomainError('forbidden', `${error.message.replace(/\.$/, '')}, which ${needer}.`, { cause: error });
  }
}

/** A key acts with (its creator's role) ∩ (its scopes); users are limited by their role alone. */
export function requireAccess(actor: Actor, { role, scope }: AccessRule): void {
  requireRole(actor, role);
  if (actor.kind === 'api_key' && !hasScope(actor.scopes, scope)) {
    throw new DomainError('forbidden', `This API key lacks the ${scope} scope.`);
  }
}
