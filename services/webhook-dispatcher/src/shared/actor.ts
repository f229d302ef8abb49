import { requireAccess, type Actor, type Role, type Scope } from '@agent-platform/kit';

export type Access = 'read' | 'write';

// decisions §3–§4: managing webhooks is an admin's job; reading them is anyone's in the tenant.
const POLICY: Record<Access, { role: Role; scope: Scope }> = {
  read: { role: 'viewer', scope: 'webhooks:read' },
  write: { role: 'admin', scope: 'webhooks:write' },
};

/** The gateway admits by the same table; the service checks again rather than trust every caller. */
export function requireWebhookAccess(actor: Actor, access: Access): void {
  const { role, scope } = POLICY[access];
  requireAccess(actor, role, scope);
}
