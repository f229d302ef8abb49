import { describe, expect, it } from 'vitest';
import { SCOPES } from '@agent-platform/kit';
import { checkScopes } from './scopes.js';

describe('checkScopes', () => {
  it('accepts every scope of the catalogue, and *', () => {
    expect(checkScopes([...SCOPES])).toEqual({ scopes: [...SCOPES], errors: [] });
    expect(checkScopes(['*']).errors).toEqual([]);
  });

  it('names each unknown scope by its index', () => {
    const { errors } = checkScopes(['agents:read', 'agents:delete', 'workflows:execute', 'AGENTS:READ']);
    expect(errors.map((e) => e.field)).toEqual(['scopes[1]', 'scopes[3]']);
    expect(errors[0]?.message).toContain('agents:delete');
  });

  it('needs at least one scope', () => {
    expect(checkScopes([]).errors).toEqual([{ field: 'scopes', message: 'must name at least one scope' }]);
  });

  it('drops duplicates and keeps the order', () => {
    expect(checkScopes(['memory:write', 'agents:read', 'memory:write']).scopes).toEqual(['memory:write', 'agents:read']);
  });
});
