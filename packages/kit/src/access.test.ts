import { describe, expect, it } from 'vitest';
import { weakerRole } from './access.js';

describe('weakerRole', () => {
  it('is the weaker of two roles, either way round; what is not a role loses to every role', () => {
    expect(weakerRole('owner', 'member')).toBe('member');
    expect(weakerRole('viewer', 'admin')).toBe('viewer');
    expect(weakerRole('admin', 'admin')).toBe('admin');
    expect(weakerRole('owner', 'nobody')).toBe('nobody');
    expect(weakerRole('', 'viewer')).toBe('');
  });
});
