import { generateKeyPairSync } from 'node:crypto';
import { decodeProtectedHeader, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { newRefreshToken, parseRefreshToken, secretMatches, sha256Hex, signAccessToken } from './tokens.js';

describe('refresh tokens', () => {
  it('have the form rtk_<ULID>.<secret> and store only the hash of the secret', () => {
    const issued = newRefreshToken();
    expect(issued.token).toMatch(/^rtk_[0-9A-HJKMNP-TV-Z]{26}\.[A-Za-z0-9_-]{43}$/);
    const parsed = parseRefreshToken(issued.token);
    expect(parsed?.id).toBe(issued.id);
    expect(issued.hash).toBe(sha256Hex(parsed!.secret));
    expect(issued.hash).not.toContain(parsed!.secret);
  });

  it('are unique', () => {
    const tokens = new Set(Array.from({ length: 200 }, () => newRefreshToken().token));
    expect(tokens.size).toBe(200);
  });

  it('match their own hash only', () => {
    const issued = newRefreshToken();
    const other = newRefreshToken();
    const secret = parseRefreshToken(issued.token)!.secret;
    expect(secretMatches(secret, issued.hash)).toBe(true);
    expect(secretMatches(secret, other.hash)).toBe(false);
    expect(secretMatches(secret, 'abc')).toBe(false);
  });

  it.each(['', 'rtk_x.y', 'no-dot', `rtk_01ARZ3NDEKTSV4RRFFQ69G5FAV.${'a'.repeat(42)}`, `usr_01ARZ3NDEKTSV4RRFFQ69G5FAV.${'a'.repeat(43)}`])(
    'rejects the malformed token %j',
    (token) => {
      expect(parseRefreshToken(token)).toBeUndefined();
    },
  );
});

describe('access tokens', () => {
  it('are EdDSA JWTs with iss, aud, sub, iat, exp, jti and kid, and no roles', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const now = new Date();
    const token = await signAccessToken('usr_01ARZ3NDEKTSV4RRFFQ69G5FAV', { kid: 'sgk_1', privateKey }, { issuer: 'iss', audience: 'aud', ttlSeconds: 3600 }, now);
    const { payload } = await jwtVerify(token, publicKey, { issuer: 'iss', audience: 'aud', algorithms: ['EdDSA'] });
    expect(decodeProtectedHeader(token)).toEqual({ alg: 'EdDSA', kid: 'sgk_1', typ: 'JWT' });
    expect(Object.keys(payload).sort()).toEqual(['aud', 'exp', 'iat', 'iss', 'jti', 'sub']);
    expect(payload.sub).toBe('usr_01ARZ3NDEKTSV4RRFFQ69G5FAV');
    expect(payload.exp! - payload.iat!).toBe(3600);
  });
});
