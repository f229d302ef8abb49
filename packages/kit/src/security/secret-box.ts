import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

const ALGORITHM = 'aes-256-gcm';
const FORMAT_VERSION = 'v1';
// 96-bit IVs are GCM's native size; random ones are safe for far more secrets than we will hold.
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** Raised when a stored secret cannot be decrypted: an unknown key, or the ciphertext was altered. */
export class SecretDecryptionError extends Error {
  override readonly name = 'SecretDecryptionError';
}

/**
 * Encrypts secrets at rest (webhook signing secrets, JWT signing keys) with AES-256-GCM. A sealed value is
 * `v1:<key id>:<base64 iv>:<base64 ciphertext>:<base64 tag>`: the key id names the key that sealed
 * it, so a key can be rotated later by adding the new key first and keeping the old ones for
 * reading. The owning row's id is bound in as associated data, so a secret copied onto another
 * row does not decrypt.
 */
export class SecretBox {
  private readonly keys: Map<string, Buffer>;
  private readonly currentKeyId: string;

  /** `keys[0]` seals; every key opens what it sealed. Each is 32 bytes. */
  constructor(keys: readonly Buffer[]) {
    if (keys.length === 0) throw new Error('SecretBox needs at least one key');
    this.keys = new Map();
    for (const key of keys) {
      if (key.length !== 32) throw new Error('SecretBox keys are 32 bytes (AES-256)');
      this.keys.set(keyIdOf(key), key);
    }
    this.currentKeyId = keyIdOf(keys[0]!);
  }

  seal(plaintext: string, associatedData: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv(ALGORITHM, this.keys.get(this.currentKeyId)!, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(associatedData, 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    const parts = [iv, ciphertext, cipher.getAuthTag()].map((part) => part.toString('base64'));
    return [FORMAT_VERSION, this.currentKeyId, ...parts].join(':');
  }

  open(sealed: string, associatedData: string): string {
    const [version, keyId = '', iv = '', ciphertext = '', tag = '', ...rest] = sealed.split(':');
    if (version !== FORMAT_VERSION || rest.length > 0) throw new SecretDecryptionError('Unknown sealed secret format.');
    const key = this.keys.get(keyId);
    if (key === undefined) throw new SecretDecryptionError(`No key with id ${keyId} is configured.`);
    try {
      const decipher = createDecipheriv(ALGORITHM, key, Buffer.from(iv, 'base64'), { authTagLength: TAG_BYTES });
      decipher.setAAD(Buffer.from(associatedData, 'utf8'));
      decipher.setAuthTag(Buffer.from(tag, 'base64'));
      return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64')), decipher.final()]).toString('utf8');
    } catch (error) {
      throw new SecretDecryptionError('The sealed secret failed authentication.', { cause: error });
    }
  }

  /** True when the value was sealed with a key other than the current one (a rotation candidate). */
  isStale(sealed: string): boolean {
    return sealed.split(':')[1] !== this.currentKeyId;
  }
}

// The hash's domain label; it is part of every stored key id, so it stays as first written.
const KEY_ID_LABEL = 'webhook-secret-key\0';

/** A short public fingerprint of a key: names it in stored values without revealing anything. */
export function keyIdOf(key: Buffer): string {
  return createHash('sha256').update(KEY_ID_LABEL).update(key).digest('hex').slice(0, 12);
}
