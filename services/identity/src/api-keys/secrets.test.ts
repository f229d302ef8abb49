import { describe, expect, it } from 'vitest';
import { hashApiKeySecret, isApiKeySecret, newApiKeySecret } from './secrets.js';

describe('API key secrets', () => {
  it('are ap_live_ and 32 base62 characters, with a 12-character prefix and a SHA-256 hash', () => {
    const { secret, keyPrefix, hash } = newApiKeySecret();
    expect(secret).toMatch(/^ap_live_[0-9A-Za-z]{32}$/);
    expect(keyPrefix).toBe(secret.slice(0, 12));
    expect(keyPrefix).toHaveLength(12);
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(hash).toBe(hashApiKeySecret(secret));
    expect(hash).not.toContain(secret.slice(8));
  });

  it('are unique and use the whole base62 alphabet', () => {
    const secrets = Array.from({ length: 2_000 }, () => newApiKeySecret().secret);
    expect(new Set(secrets).size).toBe(secrets.length);
    const seen = new Set(secrets.flatMap((s) => [...s.slice(8)]));
    expect(seen.size).toBe(62);
  });

  it('spread evenly over the alphabet (no modulo bias towards the first characters)', () => {
    const counts = new Map<string, number>();
    for (let i = 0; i < 2_000; i++) {
      for (const char of newApiKeySecret().secret.slice(8)) counts.set(char, (counts.get(char) ?? 0) + 1);
    }
    const expected = (2_000 * 32) / 62;
    for (const count of counts.values()) {
      expect(count).toBeGreaterThan(expected * 0.75);
      expect(count).toBeLessThan(expected * 1.25);
    }
  });

  it.each([
    ['ap_live_' + 'a'.repeat(32), true],
    ['ap_live_' + 'a'.repeat(31), false],
    ['ap_test_' + 'a'.repeat(32), false],
    ['ap_live_' + 'a'.repeat(31) + '-', false],
    ['', false],
  ])('recognises %j as a key: %s', (value, expected) => {
    expect(isApiKeySecret(value)).toBe(expected);
  });
});
