import { describe, expect, it } from 'vitest';
import { isId, newId, pooledRandom } from './ids.js';

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

  it('draw their randomness evenly over every character, across refills of the pool', () => {
    const counts = new Array<number>(32).fill(0);
    // 10,000 draws cross the 4 KiB pool twice; each of the 32 characters is expected ~312 times.
    for (let draw = 0; draw < 10_000; draw += 1) {
      const value = pooledRandom();
      expect(value).toBeGreaterThanOrEqual(0);
      expect(value).toBeLessThan(1);
      counts[Math.floor(value * 32)]! += 1;
    }
    expect(Math.min(...counts)).toBeGreaterThan(200);
    expect(Math.max(...counts)).toBeLessThan(430);
  });

  it('are recognised by kind', () => {
    const id = newId('apiKey');
    expect(isId('apiKey', id)).toBe(true);
    expect(isId('user', id)).toBe(false);
    expect(isId('apiKey', `${id}x`)).toBe(false);
    expect(isId('apiKey', 'key_not-a-ulid')).toBe(false);
  });
});
