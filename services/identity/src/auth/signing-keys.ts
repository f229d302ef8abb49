import { createPrivateKey, generateKeyPairSync } from 'node:crypto';
import { newId } from '@agent-platform/kit';
import type { EntityManager } from '@agent-platform/kit/db';
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
 * key pair; replicas starting together serialise on an advisory lock, so they share one key.
 */
export class SigningKeys {
  private readonly em: EntityManager;
  private readonly repository: AuthRepository;
  private active: SigningKeyMaterial | undefined;

  constructor(options: { em: EntityManager; repository: AuthRepository }) {
    this.em = options.em;
    this.repository = options.repository;
  }

  /** Loads the newest live key, creating the first one if there is none. Call once at start. */
  async load(): Promise<void> {
    const key = await this.em.transactional(async () => {
      await this.repository.lockSigningKeys();
      const [newest] = await this.repository.liveSigningKeys();
      return newest ?? this.create();
    });
    this.active = { kid: key.id, privateKey: createPrivateKey({ key: key.privateJwk, format: 'jwk' }) };
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
    return this.repository.insertSigningKey({
      id: newId('signingKey'),
      publicJwk: publicKey.export({ format: 'jwk' }),
      privateJwk: privateKey.export({ format: 'jwk' }),
      createdAt: new Date(),
    });
  }
}
