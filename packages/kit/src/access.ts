/** Roles of decisions §3, weakest first: each role may do everything the ones before it may. */
export const ROLES = ['viewer', 'member', 'admin', 'owner'] as const;
export type Role = (typeof ROLES)[number];

export function isRole(value: string): value is Role {
  return (ROLES as readonly string[]).includes(value);
}

/** True when `role` is `least` or stronger; false for anything that is not a role. */
export function roleAtLeast(role: string, least: Role): boolean {
  return isRole(role) && ROLES.indexOf(role) >= ROLES.indexOf(least);
}

/** The weaker of two roles; anything that is not a role is weaker than every role, and is kept. */
export function weakerRole(a: string, b: string): string {
  if (!isRole(a)) return a;
  if (!isRole(b)) return b;
  return ROLES.indexOf(a) <= ROLES.indexOf(b) ? a : b;
}

/** The API-key scope catalogue of decisions §4. */
export const SCOPES = [
  'agents:read',
  'agents:write',
  'memory:read',
  'memory:write',
  'workflows:read',
  'workflows:write',
  'workflows:execute',
  'webhooks:read',
  'webhooks:write',
  'billing:read',
  'tools:read',
  'tools:write',
] as const;
export type Scope = (typeof SCOPES)[number];

/** Granted on a key, stands for every scope. */
export const ALL_SCOPES = '*';
export type ScopeGrant = Scope | typeof ALL_SCOPES;

export function isScopeGrant(value: string): value is ScopeGrant {
  return value === ALL_SCOPES || (SCOPES as readonly string[]).includes(value);
}

export function hasScope(grants: readonly string[], scope: Scope): boolean {
  return grants.includes(ALL_SCOPES) || grants.includes(scope);
}

/** The roles a member may be granted; ownership is only ever given at registration. */
export const GRANTABLE_ROLES = ['admin', 'member', 'viewer'] as const satisfies readonly Role[];
export type GrantableRole = (typeof GRANTABLE_ROLES)[number];

export function isGrantableRole(value: string): value is GrantableRole {
  return (GRANTABLE_ROLES as readonly string[]).includes(value);
}

/** Every API key secret starts with this (decisions §4), so a bearer credential's kind shows at a glance. */
export const API_KEY_SECRET_PREFIX = 'ap_live_';

/** Who may do an operation on a resource: the least role in the tenant, and the scope a key also needs. */
export interface AccessRule {
  role: Role;
  scope: Scope;
}

/**
 * decisions §3–§4 per resource and operation, in one place: the gateway admits requests by these
 * rules, and each service checks the same rule again rather than trust that every caller is the gateway.
 */
export const ACCESS = {
  agents: {
    read: { role: 'viewer', scope: 'agents:read' },
    write: { role: 'member', scope: 'agents:write' },
  },
  memory: {
    read: { role: 'viewer', scope: 'memory:read' },
    write: { role: 'member', scope: 'memory:write' },
  },
  workflows: {
    read: { role: 'viewer', scope: 'workflows:read' },
    write: { role: 'member', scope: 'workflows:write' },
    execute: { role: 'member', scope: 'workflows:execute' },
  },
  tools: {
    read: { role: 'viewer', scope: 'tools:read' },
    write: { role: 'member', scope: 'tools:write' },
  },
  webhooks: {
    read: { role: 'viewer', scope: 'webhooks:read' },
    write: { role: 'admin', scope: 'webhooks:write' },
  },
  billing: {
    read: { role: 'viewer', scope: 'billing:read' },
  },
} as const satisfies Record<string, Record<string, AccessRule>>;
