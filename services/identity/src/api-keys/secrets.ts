import { createHash, randomBytes } from 'node:crypto';
import { API_KEY_SECRET_PREFIX } from '@agent-platform/kit';

export { API_KEY_SECRET_PREFIX };
/** Characters of the random part (decisions §4): 32 base62 ≈ 190 bits. */
export const API_KEY_RANDOM_LENGTH = 32;
/** What lists show of a key: the first 12 characters of the secret. */
export const API_KEY_PREFIX_LENGTH = 12;

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
// 248 = 4 × 62: bytes at or above it are dropped so every character is equally likely.
const UNBIASED_LIMIT = 248;
const SECRET_PATTERN = new RegExp(`^${API_KEY_SECRET_PREFIX}[0-9A-Za-z]{${API_KEY_RANDOM_LENGTH}}$`);

export interface ApiKeySecret {
  /** Shown to the creator once, never stored. */
  secret: string;
  keyPrefix: string;
  /** Hex SHA-256 of the secret: what is stored and looked up. */
  hash: string;
}

/** `ap_live_` + 32 base62 characters from the CSPRNG, without modulo bias. */
export function newApiKeySecret(): ApiKeySecret {
  let random = '';
  while (random.length < API_KEY_RANDOM_LENGTH) {
    for (const byte of randomBytes(API_KEY_RANDOM_LENGTH * 2)) {
      if (byte < UNBIASED_LIMIT && random.length < API_KEY_RANDOM_LENGTH) random += BASE62[byte % 62];
    }
  }
  const secret = `${API_KEY_SECRET_PREFIX}${random}`;
  return { secret, keyPrefix: secret.slice(0, API_KEY_PREFIX_LENGTH), hash: hashApiKeySecret(secret) };
}

/**
 * A fast hash is enough: the secret has ~190 bits of entropy, so unlike a password it cannot be
 * guessed from its hash, and a fast one keeps per-request authentication cheap.
 */
export function hashApiKeySecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** Rejects what cannot be a key before touching the database. */
export function isApiKeySecret(value: string): boolean {
  return SECRET_PATTERN.test(value);
}
