import type { FieldError } from '@agent-platform/kit';

/** The scope catalogue of decisions §4; `*` stands for all of them. */
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
  '*',
] as const;

export type Scope = (typeof SCOPES)[number];

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

/**
 * Checks requested scopes against the catalogue. Problems name the offending entry as `scopes[i]`;
 * the scopes come back without duplicates, in the order given.
 */
export function checkScopes(requested: readonly string[]): { scopes: Scope[]; errors: FieldError[] } {
  const errors: FieldError[] = [];
  if (requested.length === 0) errors.push({ field: 'scopes', message: 'must name at least one scope' });
  const scopes: Scope[] = [];
  requested.forEach((scope, index) => {
    if (!isScope(scope)) {
      errors.push({ field: `scopes[${index}]`, message: `unknown scope "${scope}"; known scopes: ${SCOPES.join(', ')}` });
    } else if (!scopes.includes(scope)) {
      scopes.push(scope);
    }
  });
  return { scopes, errors };
}
