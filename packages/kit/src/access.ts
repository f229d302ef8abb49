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
