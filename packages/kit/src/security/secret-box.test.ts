import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { keyIdOf, SecretBox, SecretDecryptionError } from './secret-box.js';

const key = randomBytes(32);

function tamper(sealed: string, index: number): string {
  const parts = sealed.split(':');
  const bytes = Buffer.from(parts[index]!, 'base64');
  bytes[0] = bytes[0]! ^ 0x01;
  parts[index] = bytes.toString('base64');
  return parts.join(':');
}

describe('SecretBox', () => {
  it('round-trips, naming the key and using a fresh IV every time', () => {
    const box = new SecretBox([key]);
    const first = box.seal('whsec_secret', 'wh_1');
    const second = box.seal('whsec_secret', 'wh_1');
    expect(first).not.toBe(second);
    expect(first).not.toContain('whsec_secret');
    expect(first.split(':').slice(0, 2)).toEqual(['v1', keyIdOf(key)]);
    expect(box.open(first, 'wh_1')).toBe('whsec_secret');
    expect(box.open(second, 'wh_1')).toBe('whsec_secret');
  });

  it.each([
    ['the IV', 2],
    ['the ciphertext', 3],
    ['the tag', 4],
  ])('detects a change to %s', (_part, index) => {
    const box = new SecretBox([key]);
    const sealed = box.seal('whsec_secret', 'wh_1');
    expect(() => box.open(tamper(sealed, index), 'wh_1')).toThrow(SecretDecryptionError);
  });

  it('refuses a secret moved to another row (the id is associated data)', () => {
    const box = new SecretBox([key]);
    expect(() => box.open(box.seal('whsec_secret', 'wh_1'), 'wh_2')).toThrow(SecretDecryptionError);
  });

  it('refuses values of an unknown key or format', () => {
    const sealed = new SecretBox([randomBytes(32)]).seal('whsec_secret', 'wh_1');
    expect(() => new SecretBox([key]).open(sealed, 'wh_1')).toThrow(/No key with id/);
    expect(() => new SecretBox([key]).open('whsec_plaintext', 'wh_1')).toThrow(SecretDecryptionError);
  });

  it('opens values of an older key after a rotation and seals with the new one', () => {
    const old = new SecretBox([key]);
    const sealed = old.seal('whsec_secret', 'wh_1');
    const rotated = new SecretBox([randomBytes(32), key]);
    expect(rotated.open(sealed, 'wh_1')).toBe('whsec_secret');
    expect(rotated.isStale(sealed)).toBe(true);
    expect(rotated.isStale(rotated.seal('whsec_secret', 'wh_1'))).toBe(false);
  });

  it('wants 32-byte keys', () => {
    expect(() => new SecretBox([randomBytes(16)])).toThrow(/32 bytes/);
    expect(() => new SecretBox([])).toThrow(/at least one key/);
  });
});
