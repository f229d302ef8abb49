import { DomainError } from '@agent-platform/kit';
import { roleAtLeast, type Role } from '@agent-platform/kit';

/**
 * Who acts, in which tenant: the authenticated principal the gateway forwarded, as the domain
 * sees it. Every tenant-scoped query uses `tenantId` from here, never one from a request body.
 */
export interface Actor {
  kind: 'user' | 'api_key';
  userId: string;
  tenantId: string;
  /** The user's role in the tenant (for a key: its creator's). */
  role: string;
}

/**
 * For operations only a user may perform, with at least `minimum` role. The gateway admits by the
 * same rules; the service does not rely on it. API keys cannot manage keys or members (decisions §4).
 */
export function requireUser(actor: Actor, minimum: Role): void {
  if (actor.kind !== 'user') {
    throw new DomainError('forbidden', 'This operation needs a user access token, not an API key.');
  }
  requireRole(actor, minimum);
}

export function requireRole(actor: Actor, minimum: Role): void {
  if (!roleAtLeast(actor.role, minimum)) {
    throw new DomainError('forbidden', `This operation needs the ${minimum} role or higher.`);
  }
}
