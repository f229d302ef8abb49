import { createPrivateKey, generateKeyPairSync, type JsonWebKey } from 'node:crypto';
import { newId } from '@agent-platform/kit';
import type { EntityManager } from '@agent-platform/kit/db';
import type { SecretBox } from '@agent-platform/kit/security';
import type { AuthRepository } from './auth.repository.js';
import type { SigningKey } from './auth.entity.js';
import { ACCESS_TOKEN_ALGORITHM, type SigningKeyMaterial } from './tokens.js';

/** An RFC 8037 public key as GetJwks serves it. */
export interface PublicJwk {
  kid: string;
  kty: string;
  crv: string;
  x: string;
  alg: string;
  use: string;
}

/**
 * The Ed25519 keys that sign access tokens. The first replica to start generates and persists a
 * key pair; replicas starting together serialise on an advisory lock, so they share one key. The
 * private half is stored sealed: a copy of the database alone cannot mint tokens.
 */
export class SigningKeys {
  private readonly em: EntityManager;
  private readonly repository: AuthRepository;
  private readonly secrets: SecretBox;
  private active: SigningKeyMaterial | undefined;

  constructor(options: { em: EntityManager; repository: AuthRepository; secrets: SecretBox }) {
    this.em = options.em;
    this.repository = options.repository;
    this.secrets = options.secrets;
  }

  /**
   * Loads the newest live key, creating the first one if there is none, and seals any key still
   * stored in clear (written before keys were sealed). Call once at start.
   */
  async load(): Promise<void> {
    const privateJwk = await this.em.transactional(async () => {
      await this.repository.lockSigningKeys();
      const live = await this.repository.liveSigningKeys();
      for (const key of live) if (key.privateJwk !== null) this.seal(key, key.privateJwk);
      await this.em.flush();
      const newest = live[0] ?? (await this.create());
      return { kid: newest.id, jwk: this.open(newest) };
    });
    this.active = { kid: privateJwk.kid, privateKey: createPrivateKey({ key: privateJwk.jwk, format: 'jwk' }) };
  }

  /** The key new tokens are signed with. */
  current(): SigningKeyMaterial {
    if (!this.active) throw new Error('Signing keys are not loaded; call load() at start.');
    return this.active;
  }

  /** Public keys of every live key, newest first. */
  async jwks(): Promise<PublicJwk[]> {
    const keys = await this.repository.liveSigningKeys();
    return keys.map((key) => ({
      kid: key.id,
      kty: String(key.publicJwk.kty),
      crv: String(key.publicJwk.crv),
      x: String(key.publicJwk.x),
      alg: ACCESS_TOKEN_ALGORITHM,
      use: 'sig',
    }));
  }

  private create(): Promise<SigningKey> {
    const { publicKey, privateKey } = generateKeyPairSync('ed25519');
    const id = newId('signingKey');
    return this.repository.insertSigningKey({
      id,
      publicJwk: publicKey.export({ format: 'jwk' }),
      privateKeySealed: this.secrets.seal(JSON.stringify(privateKey.export({ format: 'jwk' })), id),
      createdAt: new Date(),
    });
  }

  private seal(key: SigningKey, privateJwk: JsonWebKey): void {
    key.privateKeySealed = this.secrets.seal(JSON.stringify(privateJwk), key.id);
    key.privateJwk = null;
  }

  private open(key: SigningKey): JsonWebKey {
    if (key.privateKeySealed === null) throw new Error(`Signing key ${key.id} has no private key.`);
    return JSON.parse(this.secrets.open(key.privateKeySealed, key.id)) as JsonWebKey;
  }
}
