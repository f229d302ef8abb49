import type { EntityManager } from '@agent-platform/kit/db';
import { ApiKey } from './api-keys.entity.js';

export interface NewApiKey {
  id: string;
  tenantId: string;
  createdBy: string;
  name: string;
  keyPrefix: string;
  keyHash: string;
  scopes: string[];
  expiresAt: Date | null;
  createdAt: Date;
}

export class ApiKeysRepository {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  async insert(key: NewApiKey): Promise<ApiKey> {
    const entity = this.em.create(ApiKey, { ...key, lastUsedAt: null, revokedAt: null });
    await this.em.flush();
    return entity;
  }

  findByHash(keyHash: string): Promise<ApiKey | null> {
    return this.em.findOne(ApiKey, { keyHash });
  }

  findById(id: string): Promise<ApiKey | null> {
    return this.em.findOne(ApiKey, { id });
  }

  /** The tenant's keys that are not revoked, newest first. */
  async listLive(tenantId: string, limit: number, offset: number): Promise<{ items: ApiKey[]; total: number }> {
    const [items, total] = await this.em.findAndCount(
      ApiKey,
      { tenantId, revokedAt: null },
      { orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], limit, offset },
    );
    return { items, total };
  }

  /** One atomic statement; false when the key is unknown, of another tenant, or already revoked. */
  async revoke(tenantId: string, id: string, now: Date): Promise<boolean> {
    return (await this.em.nativeUpdate(ApiKey, { id, tenantId, revokedAt: null }, { revokedAt: now })) > 0;
  }

  /**
   * Stamps `last_used_at` unless another request did within the resolution: one conditional UPDATE,
   * so racing requests write at most once per window and nobody reads-then-writes.
   */
  async touch(id: string, now: Date, resolutionMs: number): Promise<void> {
    const staleBefore = new Date(now.getTime() - resolutionMs);
    await this.em.nativeUpdate(
      ApiKey,
      { id, $or: [{ lastUsedAt: null }, { lastUsedAt: { $lte: staleBefore } }] },
      { lastUsedAt: now },
    );
  }
}
