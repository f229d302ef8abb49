import { actorOf, type Handlers } from '@agent-platform/kit/grpc';
import type { Delivery as DeliveryMessage, WebhookServiceService } from '@agent-platform/proto/webhooks/v1';
import { parseCursorPage } from '@agent-platform/kit';
import type { DeliveriesService } from './deliveries.service.js';
import type { DeliveryWithAttempts } from './deliveries.repository.js';

type DeliveryMethods = 'testWebhook' | 'listDeliveries' | 'getDelivery' | 'retryDelivery';

/** The delivery half of WebhookService: translation only; DeliveriesService decides. */
export function deliveryHandlers(deliveries: DeliveriesService): Pick<Handlers<typeof WebhookServiceService>, DeliveryMethods> {
  return {
    testWebhook: async (request, ctx) => {
      const { deliveryId, result } = await deliveries.test(actorOf(ctx), request.webhookId, request.eventType);
      return {
        success: result.outcome === 'delivered',
        deliveryId,
        responseStatus: result.responseStatus,
        responseTimeMs: result.responseTimeMs,
        error: result.error ?? undefined,
      };
    },

    listDeliveries: async (request, ctx) => {
      const page = await deliveries.list(actorOf(ctx), request.webhookId, parseCursorPage(request.page));
      return { items: page.items.map(toMessage), total: page.total, nextCursor: page.nextCursor };
    },

    getDelivery: async (request, ctx) => ({
      delivery: toMessage(await deliveries.get(actorOf(ctx), request.webhookId, request.deliveryId)),
    }),

    retryDelivery: async (request, ctx) => ({
      delivery: toMessage(await deliveries.retry(actorOf(ctx), request.webhookId, request.deliveryId)),
    }),
  };
}

export function toMessage({ delivery, attempts }: DeliveryWithAttempts): DeliveryMessage {
  return {
    id: delivery.id,
    webhookId: delivery.webhookId,
    eventId: delivery.eventId,
    eventType: delivery.eventType,
    status: delivery.status,
    responseStatus: delivery.responseStatus,
    responseTimeMs: delivery.responseTimeMs,
    attempts: delivery.attempts,
    deliveredAt: delivery.deliveredAt ?? undefined,
    nextAttemptAt: delivery.status === 'pending' ? (delivery.nextAttemptAt ?? undefined) : undefined,
    error: delivery.error ?? undefined,
    createdAt: delivery.createdAt,
    attemptLog: attempts.map((attempt) => ({
      number: attempt.number,
      startedAt: attempt.startedAt,
      responseStatus: attempt.responseStatus,
      responseTimeMs: attempt.responseTimeMs,
      outcome: attempt.outcome,
      error: attempt.error ?? undefined,
    })),
  };
}
