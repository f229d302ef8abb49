import type { Actor } from '../actor.js';
import { DomainError } from '../errors.js';
import { PrincipalKind, type Principal } from './metadata.js';
import { requirePrincipal, type CallContext } from './server.js';

const KINDS = new Map<PrincipalKind, Actor['kind']>([
  [PrincipalKind.KIND_USER, 'user'],
  [PrincipalKind.KIND_API_KEY, 'api_key'],
]);

/** The call's principal as an Actor; unauthorized when the gateway forwarded none. */
export function actorOf(ctx: CallContext): Actor {
  const principal = requirePrincipal(ctx);
  const kind = KINDS.get(principal.kind);
  if (kind === undefined || principal.userId === '') {
    throw new DomainError('unauthorized', 'This call needs an authenticated principal.');
  }
  const apiKeyId = present(principal.apiKeyId);
  return { kind, userId: principal.userId, ...(apiKeyId ? { apiKeyId } : {}), tenantId: principal.tenantId, role: principal.role, scopes: principal.scopes };
}

/** The actor as call metadata, to call another service as the same principal with the same scopes. */
export function principalOf(actor: Actor): Principal {
  return {
    kind: actor.kind === 'api_key' ? PrincipalKind.KIND_API_KEY : PrincipalKind.KIND_USER,
    userId: actor.userId,
    apiKeyId: actor.apiKeyId ?? '',
    tenantId: actor.tenantId,
    role: actor.role,
    scopes: [...actor.scopes],
  };
}

/**
 * The principal a service calls another with on the platform's behalf: the user stays who they
 * are (for the callee's logs and records), in their tenant, at `role` — the least that the call
 * needs — with no key scopes, whatever the original caller held.
 */
export function platformPrincipal(user: { userId: string; tenantId: string }, role: 'viewer' | 'member'): Principal {
  return { kind: PrincipalKind.KIND_USER, userId: user.userId, apiKeyId: '', tenantId: user.tenantId, role, scopes: [] };
}

/** proto3 `optional` strings arrive as undefined or, from some clients, as the empty string. */
export function present(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}
