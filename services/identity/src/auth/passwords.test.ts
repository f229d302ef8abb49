import { describe, expect, it } from 'vitest';
import { PasswordHasher, type ScryptParams } from './passwords.js';

// Cheap parameters keep the suite fast; the format and the logic are the same as in production.
const FAST: ScryptParams = { logN: 10, r: 8, p: 1, keyLength: 32, saltLength: 16 };

describe('PasswordHasher', () => {
  const hasher = new PasswordHasher(FAST);

  it('writes a PHC string that carries its parameters and a random salt', async () => {
    const first = await hasher.hash('correct horse battery');
    const second = await hasher.hash('correct horse battery');
    expect(first).toMatch(/^\$scrypt\$ln=10,r=8,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
    expect(second).not.toBe(first);
    expect(first).not.toContain('correct horse battery');
  });

  it('verifies the right password and rejects a wrong one', async () => {
    const stored = await hasher.hash('correct horse battery');
    expect(await hasher.verify('correct horse battery', stored)).toBe(true);
    expect(await hasher.verify('correct horse batter', stored)).toBe(false);
    expect(await hasher.verify('', stored)).toBe(false);
  });

  it('treats canonically equivalent Unicode spellings as the same password', async () => {
    const stored = await hasher.hash('caf\u00e9-password');
    expect(await hasher.verify('cafe\u0301-password', stored)).toBe(true);
  });

  it('verifies hashes made with other parameters, and says they need a rehash', async () => {
    const older = new PasswordHasher({ ...FAST, logN: 11 });
    const stored = await older.hash('correct horse battery');
    expect(await hasher.verify('correct horse battery', stored)).toBe(true);
    expect(hasher.needsRehash(stored)).toBe(true);
    expect(hasher.needsRehash(await hasher.hash('x'.repeat(8)))).toBe(false);
  });

  it('rejects malformed and out-of-bounds stored values instead of throwing', async () => {
    expect(await hasher.verify('pw', 'not-a-hash')).toBe(false);
    expect(await hasher.verify('pw', '$scrypt$ln=30,r=8,p=1$c2FsdHNhbHRzYWx0$a2V5a2V5a2V5a2V5a2V5a2V5')).toBe(false);
  });

  it('spends a verification on an unknown account and answers false', async () => {
    expect(await hasher.verifyNothing('whatever-password')).toBe(false);
  });
});
