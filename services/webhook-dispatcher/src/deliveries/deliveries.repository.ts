import type { EntityManager } from '@agent-platform/kit/db';
import type { Cursor } from '@agent-platform/kit';
import { Delivery, DeliveryAttempt } from './deliveries.entity.js';
import type { AttemptResult } from './http-sender.js';

export interface DeliveryWithAttempts {
  delivery: Delivery;
  /** Oldest first. */
  attempts: DeliveryAttempt[];
}

/** A one-off delivery made and attempted on the spot (TestWebhook). */
export interface RecordedDelivery {
  id: string;
  tenantId: string;
  webhookId: string;
  eventId: string;
  eventType: string;
  eventCreatedAt: Date;
  payload: string;
  startedAt: Date;
  result: AttemptResult;
  workerId: string;
}

/** Reads of the delivery log and its one-off writes; the queue's own SQL is in DeliveryQueue. */
export class DeliveriesRepository {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  /** Null unless the delivery is the tenant's and the webhook's. */
  async find(tenantId: string, webhookId: string, id: string): Promise<DeliveryWithAttempts | null> {
    const delivery = await this.em.findOne(Delivery, { id, tenantId, webhookId });
    if (!delivery) return null;
    return { delivery, attempts: await this.attemptsOf([id]).then((all) => all.get(id) ?? []) };
  }

  /** Newest first, after the cursor; `total` counts the endpoint's whole log. */
  async list(
    tenantId: string,
    webhookId: string,
    limit: number,
    after: Cursor | undefined,
  ): Promise<{ items: DeliveryWithAttempts[]; total: number; hasMore: boolean }> {
    const position = after ? { $or: [{ createdAt: { $lt: after.createdAt } }, { createdAt: after.createdAt, id: { $lt: after.id } }] } : {};
    const rows = await this.em.find(Delivery, { tenantId, webhookId, ...position }, { orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], limit: limit + 1 });
    const total = await this.em.count(Delivery, { tenantId, webhookId });
    const page = rows.slice(0, limit);
    const attempts = await this.attemptsOf(page.map((delivery) => delivery.id));
    return {
      items: page.map((delivery) => ({ delivery, attempts: attempts.get(delivery.id) ?? [] })),
      total,
      hasMore: rows.length > limit,
    };
  }

  /** The delivery and its single attempt, together. */
  async insertAttempted(row: RecordedDelivery): Promise<void> {
    const { result } = row;
    const delivered = result.outcome === 'delivered';
    await this.em.transactional(async (tx) => {
      await tx.insert(Delivery, {
        id: row.id,
        tenantId: row.tenantId,
        webhookId: row.webhookId,
        eventId: row.eventId,
        eventType: row.eventType,
        eventCreatedAt: row.eventCreatedAt,
        payload: row.payload,
        status: delivered ? 'delivered' : 'failed',
        attempts: 1,
        maxAttempts: 1,
        failsEndpoint: false,
        nextAttemptAt: null,
        // A test send runs in the caller's request; it has no event whose trace to join.
        traceContext: null,
        responseStatus: result.responseStatus,
        responseTimeMs: result.responseTimeMs,
        error: result.error,
        deliveredAt: delivered ? new Date() : null,
        createdAt: row.startedAt,
        updatedAt: new Date(),
      });
      await tx.insert(DeliveryAttempt, {
        deliveryId: row.id,
        number: 1,
        startedAt: row.startedAt,
        responseStatus: result.responseStatus,
        responseTimeMs: result.responseTimeMs,
        outcome: result.outcome,
        error: result.error,
        workerId: row.workerId,
      });
    });
  }

  /**
   * A replay: due now, by the database clock. A pending delivery keeps its retry budget; a finished
   * one gets exactly one more attempt, whose failure does not fail the endpoint (a replay is the
   * operator's probe, not the retry policy). False when the delivery is not there.
   */
  async replay(tenantId: string, webhookId: string, id: string): Promise<boolean> {
    const result = await this.em.execute<{ affectedRows: number }>(
      `update "webhook_deliveries" set
         "max_attempts" = case when "status" = 'pending' then "max_attempts" else "attempts" + 1 end,
         "fails_endpoint" = "status" = 'pending' and "fails_endpoint",
         "delivered_at" = case when "status" = 'pending' then "delivered_at" else null end,
         "status" = 'pending', "next_attempt_at" = now(), "updated_at" = now()
       where "id" = ? and "tenant_id" = ? and "webhook_id" = ?`,
      [id, tenantId, webhookId],
      'run',
    );
    return result.affectedRows > 0;
  }

  private async attemptsOf(deliveryIds: string[]): Promise<Map<string, DeliveryAttempt[]>> {
    const byDelivery = new Map<string, DeliveryAttempt[]>();
    if (deliveryIds.length === 0) return byDelivery;
    const attempts = await this.em.find(DeliveryAttempt, { deliveryId: { $in: deliveryIds } }, { orderBy: [{ deliveryId: 'asc' }, { number: 'asc' }] });
    for (const attempt of attempts) {
      const list = byDelivery.get(attempt.deliveryId) ?? [];
      list.push(attempt);
      byDelivery.set(attempt.deliveryId, list);
    }
    return byDelivery;
  }
}
