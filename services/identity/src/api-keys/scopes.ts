import { ALL_SCOPES, SCOPES, isScopeGrant, type FieldError, type ScopeGrant } from '@agent-platform/kit';

/**
 * Checks requested scopes against the catalogue. Problems name the offending entry as `scopes[i]`;
 * the scopes come back without duplicates, in the order given.
 */
export function checkScopes(requested: readonly string[]): { scopes: ScopeGrant[]; errors: FieldError[] } {
  const errors: FieldError[] = [];
  if (requested.length === 0) errors.push({ field: 'scopes', message: 'must name at least one scope' });
  const scopes: ScopeGrant[] = [];
  requested.forEach((scope, index) => {
    if (!isScopeGrant(scope)) {
      errors.push({ field: `scopes[${index}]`, message: `unknown scope "${scope}"; known scopes: ${[...SCOPES, ALL_SCOPES].join(', ')}` });
    } else if (!scopes.includes(scope)) {
      scopes.push(scope);
    }
  });
  return { scopes, errors };
}
