import type { TraceCarrier } from '@agent-platform/kit/events';
import { defineEntity, p } from '@mikro-orm/postgresql';

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];
export type AttemptOutcome = 'delivered' | 'failed';

/** One event on its way to one endpoint; unique per (webhook, event), so fan-out is idempotent. */
export const DeliverySchema = defineEntity({
  name: 'Delivery',
  tableName: 'webhook_deliveries',
  properties: {
    id: p.string().primary(),
    tenantId: p.string(),
    webhookId: p.string(),
    eventId: p.string(),
    eventType: p.string(),
    /** The envelope's `created_at`: an endpoint's queue is served in this order. */
    eventCreatedAt: p.datetime(),
    /** The exact body sent (the envelope's JSON); signatures cover these bytes. */
    payload: p.text().lazy(),
    status: p.enum(DELIVERY_STATUSES),
    attempts: p.integer(),
    /** A failure of attempt number ≥ this is final. */
    maxAttempts: p.integer(),
    /** Whether that final failure marks the endpoint failed (true for events; false for replays and tests). */
    failsEndpoint: p.boolean(),
    nextAttemptAt: p.datetime().strictNullable(),
    /** Of the latest attempt; 0 when it got no HTTP response. */
    responseStatus: p.integer(),
    responseTimeMs: p.integer(),
    /** Of the latest failed attempt. */
    error: p.text().strictNullable(),
    deliveredAt: p.datetime().strictNullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
    /** W3C trace context of the fan-out; each attempt joins that trace. Read by the queue's own SQL. */
    traceContext: p.json<TraceCarrier>().columnType('json').strictNullable().lazy(),
  },
});

export class Delivery extends DeliverySchema.class {}
DeliverySchema.setClass(Delivery);

export const DeliveryAttemptSchema = defineEntity({
  name: 'DeliveryAttempt',
  tableName: 'webhook_delivery_attempts',
  properties: {
    deliveryId: p.string().primary(),
    number: p.integer().primary(),
    startedAt: p.datetime(),
    responseStatus: p.integer(),
    responseTimeMs: p.integer(),
    outcome: p.enum(['delivered', 'failed'] as const),
    error: p.text().strictNullable(),
    /** Which dispatcher process sent it. */
    workerId: p.string(),
  },
});

export class DeliveryAttempt extends DeliveryAttemptSchema.class {}
DeliveryAttemptSchema.setClass(DeliveryAttempt);
