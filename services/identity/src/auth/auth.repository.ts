import type { EntityManager } from '@agent-platform/kit/db';
import { LockMode } from '@mikro-orm/postgresql';
import { RefreshToken, SigningKey } from './auth.entity.js';

export interface NewRefreshToken {
  id: string;
  familyId: string;
  userId: string;
  tokenHash: string;
  createdAt: Date;
  expiresAt: Date;
}

export class AuthRepository {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  /** Serialises signing-key bootstrap across replicas until the surrounding transaction ends. */
  async lockSigningKeys(): Promise<void> {
    await this.em.execute("select pg_advisory_xact_lock(hashtext('identity.signing_keys'))");
  }

  /** Keys that are not retired, newest first: the first signs, all of them verify. */
  liveSigningKeys(): Promise<SigningKey[]> {
    return this.em.find(SigningKey, { retiredAt: null }, { orderBy: [{ createdAt: 'desc' }, { id: 'desc' }] });
  }

  async insertSigningKey(key: Pick<SigningKey, 'id' | 'publicJwk' | 'privateKeySealed' | 'createdAt'>): Promise<SigningKey> {
    const entity = this.em.create(SigningKey, { ...key, privateJwk: null, retiredAt: null });
    await this.em.flush();
    return entity;
  }

  async insertRefreshToken(token: NewRefreshToken): Promise<void> {
    await this.em.insert(RefreshToken, { ...token, spentAt: null, revokedAt: null });
  }

  /** Locks the row until the transaction ends, so one presentation of a token wins and the next sees it spent. */
  findRefreshTokenForUpdate(id: string): Promise<RefreshToken | null> {
    return this.em.findOne(RefreshToken, { id }, { lockMode: LockMode.PESSIMISTIC_WRITE });
  }

  async markSpent(token: RefreshToken, now: Date): Promise<void> {
    token.spentAt = now;
    await this.em.flush();
  }

  /** Revokes every live token of the family: the answer to a replayed (spent) token. */
  async revokeFamily(familyId: string, now: Date): Promise<number> {
    return this.em.nativeUpdate(RefreshToken, { familyId, revokedAt: null }, { revokedAt: now });
  }
}
