import { describe, expect, it } from 'vitest';
import { isId, newId } from './ids.js';

describe('ids', () => {
  it('are the prefix and a 26-character ULID', () => {
    expect(newId('user')).toMatch(/^usr_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(newId('workflow')).toMatch(/^wf_[0-9A-HJKMNP-TV-Z]{26}$/);
  });

  it('sort in creation order even within one millisecond', () => {
    const ids = Array.from({ length: 1000 }, () => newId('event'));
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('are recognised by kind', () => {
    const id = newId('apiKey');
    expect(isId('apiKey', id)).toBe(true);
    expect(isId('user', id)).toBe(false);
    expect(isId('apiKey', `${id}x`)).toBe(false);
    expect(isId('apiKey', 'key_not-a-ulid')).toBe(false);
  });
});
