import type { EntityManager } from '@agent-platform/kit/db';
import { Webhook } from './webhooks.entity.js';

export interface NewWebhook {
  id: string;
  tenantId: string;
  url: string;
  events: string[];
  description: string | null;
  metadata: string;
  secretSealed: string;
  createdAt: Date;
}

export interface WebhookChanges {
  url?: string;
  events?: string[];
  description?: string | null;
  metadata?: string;
}

/** Every read and write takes the tenant id: another tenant's endpoint is simply not there. */
export class WebhooksRepository {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  async insert(webhook: NewWebhook): Promise<Webhook> {
    const entity = this.em.create(Webhook, {
      ...webhook,
      status: 'active',
      updatedAt: webhook.createdAt,
      failedAt: null,
      leaseUntil: null,
      leaseToken: null,
    });
    await this.em.flush();
    return entity;
  }

  find(tenantId: string, id: string): Promise<Webhook | null> {
    return this.em.findOne(Webhook, { id, tenantId });
  }

  /** Newest first. */
  async list(tenantId: string, limit: number, offset: number): Promise<{ items: Webhook[]; total: number }> {
    const [items, total] = await this.em.findAndCount(Webhook, { tenantId }, { orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], limit, offset });
    return { items, total };
  }

  /** Applies the changes present; null when the endpoint is not the tenant's. */
  async update(tenantId: string, id: string, changes: WebhookChanges, now: Date): Promise<Webhook | null> {
    const webhook = await this.find(tenantId, id);
    if (!webhook) return null;
    this.em.assign(webhook, { ...changes, updatedAt: now });
    await this.em.flush();
    return webhook;
  }

  async replaceSecret(tenantId: string, id: string, secretSealed: string, now: Date): Promise<Webhook | null> {
    const webhook = await this.find(tenantId, id);
    if (!webhook) return null;
    this.em.assign(webhook, { secretSealed, updatedAt: now });
    await this.em.flush();
    return webhook;
  }

  /** Idempotent: an active endpoint stays as it is. Null when it is not the tenant's. */
  async enable(tenantId: string, id: string, now: Date): Promise<Webhook | null> {
    const webhook = await this.find(tenantId, id);
    if (!webhook) return null;
    if (webhook.status !== 'active') {
      this.em.assign(webhook, { status: 'active', failedAt: null, updatedAt: now });
      await this.em.flush();
    }
    return webhook;
  }

  /** Its deliveries and their attempts go with it (ON DELETE CASCADE). */
  async delete(tenantId: string, id: string): Promise<boolean> {
    return (await this.em.nativeDelete(Webhook, { id, tenantId })) > 0;
  }
}
