import { randomBytes } from 'node:crypto';
import { DomainError, newId, type FieldError } from '@agent-platform/kit';
import type { Delivery, DeliveryAttempt, Webhook } from '@agent-platform/proto/webhooks/v1';
import { isEventType } from '@agent-platform/kit/events';

/** The in-memory state behind the webhook-dispatcher double: enough of the service to drive the gateway. */
export interface WebhookRow {
  id: string;
  tenantId: string;
  url: string;
  events: string[];
  status: string;
  metadataJson: string;
  description: string | undefined;
  secret: string;
  createdAt: Date;
  updatedAt: Date;
}

export interface DeliveryRow {
  id: string;
  tenantId: string;
  webhookId: string;
  eventId: string;
  eventType: string;
  status: string;
  attempts: DeliveryAttempt[];
  deliveredAt: Date | undefined;
  nextAttemptAt: Date | undefined;
  createdAt: Date;
}

export function generatedSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

/** The dispatcher's semantic rules, roughly: the gateway must pass its verdicts through untouched. */
export function semanticErrors(fields: { url?: string; events?: string[]; secret?: string; metadataJson?: string }): FieldError[] {
  const errors: FieldError[] = [];
  if (fields.url !== undefined && !fields.url.startsWith('https://')) errors.push({ field: 'url', message: 'Must use https.' });
  if (fields.events?.length === 0) errors.push({ field: 'events', message: 'Subscribe to at least one event type.' });
  fields.events?.forEach((type, index) => {
    if (type !== '*' && !isEventType(type)) errors.push({ field: `events[${index}]`, message: `Unknown event type "${type}".` });
  });
  if (fields.secret !== undefined && !/^[\x21-\x7e]{16,128}$/.test(fields.secret)) {
    errors.push({ field: 'secret', message: 'Must be 16..128 printable characters.' });
  }
  return errors;
}

export class WebhooksModel {
  readonly webhooks = new Map<string, WebhookRow>();
  readonly deliveries: DeliveryRow[] = [];

  /** The webhook of the tenant; another tenant's is as absent as a missing one. */
  webhook(tenantId: string, id: string): WebhookRow {
    const row = this.webhooks.get(id);
    if (!row || row.tenantId !== tenantId) throw DomainError.notFound('Webhook');
    return row;
  }

  delivery(webhook: WebhookRow, id: string): DeliveryRow {
    const row = this.deliveries.find((delivery) => delivery.id === id && delivery.webhookId === webhook.id);
    if (!row) throw DomainError.notFound('Delivery');
    return row;
  }

  /** Newest first. */
  webhooksOf(tenantId: string): WebhookRow[] {
    return [...this.webhooks.values()].filter((row) => row.tenantId === tenantId).reverse();
  }

  /** Newest first. */
  deliveriesOf(webhookId: string): DeliveryRow[] {
    return this.deliveries.filter((row) => row.webhookId === webhookId).reverse();
  }

  addWebhook(tenantId: string, fields: Partial<WebhookRow> = {}): WebhookRow {
    const now = new Date();
    const row: WebhookRow = {
      id: newId('webhook'),
      tenantId,
      url: 'https://receiver.example.com/hooks',
      events: ['*'],
      status: 'active',
      metadataJson: '{}',
      description: undefined,
      secret: generatedSecret(),
      createdAt: now,
      updatedAt: now,
      ...fields,
    };
    this.webhooks.set(row.id, row);
    return row;
  }

  addDelivery(webhook: WebhookRow, fields: Partial<DeliveryRow> = {}): DeliveryRow {
    const row: DeliveryRow = {
      id: newId('delivery'),
      tenantId: webhook.tenantId,
      webhookId: webhook.id,
      eventId: newId('event'),
      eventType: 'agent.created',
      status: 'pending',
      attempts: [],
      deliveredAt: undefined,
      nextAttemptAt: new Date(),
      createdAt: new Date(),
      ...fields,
    };
    this.deliveries.push(row);
    return row;
  }

  /** What a receiver at `url` answers, by convention of the tests: host `unreachable…` never answers, path `/fail` 500s. */
  static attempt(url: string, number: number): DeliveryAttempt {
    const target = new URL(url);
    const base = { number, startedAt: new Date(), responseTimeMs: 12 };
    if (target.hostname.startsWith('unreachable')) return { ...base, responseStatus: 0, outcome: 'failed', error: 'connect ECONNREFUSED' };
    if (target.pathname.startsWith('/fail')) return { ...base, responseStatus: 500, outcome: 'failed', error: 'The receiver answered 500.' };
    return { ...base, responseStatus: 200, outcome: 'delivered' };
  }

  static toWebhook(row: WebhookRow): Webhook {
    return {
      id: row.id,
      url: row.url,
      events: row.events,
      status: row.status,
      metadataJson: row.metadataJson,
      description: row.description,
      createdAt: row.createdAt,
      updatedAt: row.updatedAt,
    };
  }

  static toDelivery(row: DeliveryRow): Delivery {
    const latest = row.attempts.at(-1);
    const failed = row.attempts.findLast((attempt) => attempt.outcome === 'failed');
    return {
      id: row.id,
      webhookId: row.webhookId,
      eventId: row.eventId,
      eventType: row.eventType,
      status: row.status,
      responseStatus: latest?.responseStatus ?? 0,
      responseTimeMs: latest?.responseTimeMs ?? 0,
      attempts: row.attempts.length,
      deliveredAt: row.deliveredAt,
      nextAttemptAt: row.nextAttemptAt,
      error: failed?.error,
      createdAt: row.createdAt,
      attemptLog: row.attempts,
    };
  }
}
