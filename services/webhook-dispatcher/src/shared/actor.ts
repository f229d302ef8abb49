import { DomainError, hasScope, roleAtLeast, type Role, type Scope } from '@agent-platform/kit';

/**
 * Who acts, in which tenant: the principal the gateway forwarded, as the domain sees it. Every
 * query is scoped by `tenantId` from here, never by an id from a request body.
 */
export interface Actor {
  kind: 'user' | 'api_key';
  tenantId: string;
  /** The user's role in the tenant (for a key: its creator's). */
  role: string;
  /** An API key's scopes; empty for users. */
  scopes: readonly string[];
}

export type Access = 'read' | 'write';

// decisions §3–§4: managing webhooks is an admin's job; reading them is anyone's in the tenant.
const POLICY: Record<Access, { role: Role; scope: Scope }> = {
  read: { role: 'viewer', scope: 'webhooks:read' },
  write: { role: 'admin', scope: 'webhooks:write' },
};

/**
 * The gateway admits by the same table; the service checks again rather than trust that every
 * caller is the gateway. A key acts with (its creator's role) ∩ (its scopes).
 */
export function requireAccess(actor: Actor, access: Access): void {
  const { role, scope } = POLICY[access];
  if (!roleAtLeast(actor.role, role)) throw new DomainError('forbidden', `This action needs the ${role} role or higher in the tenant.`);
  if (actor.kind === 'api_key' && !hasScope(actor.scopes, scope)) {
    throw new DomainError('forbidden', `This API key lacks the ${scope} scope.`);
  }
}
