import { createHash, randomBytes, randomUUID, timingSafeEqual, type KeyObject } from 'node:crypto';
import { isId, newId } from '@agent-platform/kit';
import { SignJWT } from 'jose';

export const ACCESS_TOKEN_ALGORITHM = 'EdDSA';

export interface AccessTokenSettings {
  issuer: string;
  audience: string;
  /** Seconds. */
  ttlSeconds: number;
}

export interface SigningKeyMaterial {
  kid: string;
  privateKey: KeyObject;
}

/**
 * A JWT that says who the user is and nothing about what they may do: no roles, no tenant. The
 * gateway resolves the membership per request (ResolveMembership), so a role change or removal
 * takes effect without waiting for tokens to expire.
 */
export async function signAccessToken(userId: string, key: SigningKeyMaterial, settings: AccessTokenSettings, now = new Date()): Promise<string> {
  const issuedAt = Math.floor(now.getTime() / 1_000);
  return new SignJWT({})
    .setProtectedHeader({ alg: ACCESS_TOKEN_ALGORITHM, kid: key.kid, typ: 'JWT' })
    .setIssuer(settings.issuer)
    .setAudience(settings.audience)
    .setSubject(userId)
    .setIssuedAt(issuedAt)
    .setExpirationTime(issuedAt + settings.ttlSeconds)
    .setJti(randomUUID())
    .sign(key.privateKey);
}

/** A refresh token as issued: `rtk_<ULID>.<43 base64url chars>`; the id names the row, the secret proves possession. */
export interface RefreshTokenSecret {
  id: string;
  token: string;
  /** Hex SHA-256 of the secret part: the only thing stored. */
  hash: string;
}

const SECRET_BYTES = 32;
const SECRET_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export function newRefreshToken(): RefreshTokenSecret {
  const id = newId('refreshToken');
  const secret = randomBytes(SECRET_BYTES).toString('base64url');
  return { id, token: `${id}.${secret}`, hash: sha256Hex(secret) };
}

/** Splits a presented token; undefined when it cannot be one of ours. */
export function parseRefreshToken(token: string): { id: string; secret: string } | undefined {
  const dot = token.indexOf('.');
  if (dot < 0) return undefined;
  const id = token.slice(0, dot);
  const secret = token.slice(dot + 1);
  if (!isId('refreshToken', id) || !SECRET_PATTERN.test(secret)) return undefined;
  return { id, secret };
}

/** Constant-time comparison of a presented secret with a stored hash. */
export function secretMatches(secret: string, storedHash: string): boolean {
  const presented = Buffer.from(sha256Hex(secret), 'hex');
  const stored = Buffer.from(storedHash, 'hex');
  return presented.length === stored.length && timingSafeEqual(presented, stored);
}

export function sha256Hex(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}
