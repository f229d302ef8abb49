import { defineEntity, p } from '@mikro-orm/postgresql';

export const WEBHOOK_STATUSES = ['active', 'failed'] as const;
export type WebhookStatus = (typeof WEBHOOK_STATUSES)[number];

export const WebhookSchema = defineEntity({
  name: 'Webhook',
  tableName: 'webhooks',
  properties: {
    id: p.string().primary(),
    tenantId: p.string(),
    url: p.text(),
    /** Catalogue types, or `['*']`. */
    events: p.array(),
    /** `failed` once a delivery exhausted its attempts; nothing is fanned out to it until enabled. */
    status: p.enum(WEBHOOK_STATUSES),
    description: p.text().strictNullable(),
    /** A JSON object as compact text, key order as supplied. */
    metadata: p.text(),
    /** The signing secret, sealed by SecretBox with the webhook id as associated data. */
    secretSealed: p.text().hidden(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
    failedAt: p.datetime().strictNullable(),
    /** While set in the future, a worker holds this endpoint's single in-flight slot. */
    leaseUntil: p.datetime().strictNullable(),
    /** Fences the lease: only the worker holding this token may record attempts or hand the endpoint back. */
    leaseToken: p.string().strictNullable().hidden(),
  },
});

export class Webhook extends WebhookSchema.class {}
WebhookSchema.setClass(Webhook);
