import { DomainError, hasScope, weakerRole, type Actor, type Scope } from '@agent-platform/kit';
import type { PromiseClient } from '@agent-platform/kit/grpc';
import type { AuthServiceService } from '@agent-platform/proto/identity/v1/auth';

/**
 * Whether the credential a piece of work started with still holds (decisions §12): a chat turn
 * outlives the request check that admitted it, through tool rounds and approvals, and a key
 * revoked or a member removed meanwhile must stop it at its next tool call.
 */
export interface Principals {
  /**
   * The actor as it may act now: never more than it started with (the weaker role, the scopes
   * both grant), less when its role was lowered. unauthorized when its key was revoked or expired
   * or its user is gone; forbidden when the user is no longer a member of the tenant.
   */
  confirm(actor: Actor, requestId: string | undefined): Promise<Actor>;
}

/** Asks identity, which keeps the keys and memberships, every time: a revocation counts at once. */
export class IdentityPrincipals implements Principals {
  private readonly auth: PromiseClient<typeof AuthServiceService>;

  constructor(auth: PromiseClient<typeof AuthServiceService>) {
    this.auth = auth;
  }

  async confirm(actor: Actor, requestId: string | undefined): Promise<Actor> {
    const call = requestId ? { requestId } : {};
    if (actor.kind === 'api_key') {
      if (actor.apiKeyId === undefined) throw new DomainError('unauthorized', 'The API key that started this work cannot be identified.');
      const key = await this.auth.confirmApiKey({ apiKeyId: actor.apiKeyId }, call);
      if (key.tenantId !== actor.tenantId || key.userId !== actor.userId) throw new DomainError('unauthorized', 'The API key that started this work is not this tenant’s.');
      return { ...actor, role: weakerRole(actor.role, key.role), scopes: actor.scopes.filter((scope) => scope === '*' ? key.scopes.includes('*') : hasScope(key.scopes, scope as Scope)) };
    }
    const membership = await this.auth.resolveMembership({ userId: actor.userId, tenantId: actor.tenantId }, call);
    return { ...actor, role: weakerRole(actor.role, membership.role) };
  }
}
