import { ACCESS, DomainError, encodeCursor, newId, requireAccess, type Actor, type CursorPage } from '@agent-platform/kit';
import { isEventType, newEvent } from '@agent-platform/kit/events';
import type { SecretBox } from '@agent-platform/kit/security';
import type { WebhooksRepository } from '../webhooks/webhooks.repository.js';
import type { DeliveriesRepository, DeliveryWithAttempts } from './deliveries.repository.js';
import { signingKeys } from '../security/signing.js';
import { buildAttemptRequest, type AttemptResult, type HttpSender } from './http-sender.js';

export interface DeliveriesServiceOptions {
  deliveries: DeliveriesRepository;
  webhooks: WebhooksRepository;
  secrets: SecretBox;
  sender: HttpSender;
  /** Tells this process's worker that something became due. */
  wake: () => void;
  workerId: string;
}

export interface TestOutcome {
  deliveryId: string;
  result: AttemptResult;
}

export interface DeliveryPage {
  items: DeliveryWithAttempts[];
  total: number;
  nextCursor: string | undefined;
}

/** The delivery log of the actor's endpoints, test sends and replays. */
export class DeliveriesService {
  private readonly options: DeliveriesServiceOptions;

  constructor(options: DeliveriesServiceOptions) {
    this.options = options;
  }

  /**
   * Sends one synthetic event (`data: {test: true}`) now, once, whatever the endpoint's status —
   * it is how an operator checks a failed endpoint before enabling it — and records it.
   */
  async test(actor: Actor, webhookId: string, eventType: string): Promise<TestOutcome> {
    requireAccess(actor, ACCESS.webhooks.write);
    const webhook = await this.options.webhooks.find(actor.tenantId, webhookId);
    if (!webhook) throw DomainError.notFound('Webhook');
    if (!isEventType(eventType)) {
      throw DomainError.validation([{ field: 'event_type', message: `"${eventType}" is not an event type of the catalogue` }]);
    }
    const event = newEvent(eventType, actor.tenantId, { test: true });
    const body = JSON.stringify(event);
    const deliveryId = newId('delivery');
    const startedAt = new Date();
    const secret = this.options.secrets.open(webhook.secretSealed, webhook.id);
    const request = buildAttemptRequest({ url: webhook.url, keys: signingKeys(secret), eventId: event.id, eventType, deliveryId, body, now: startedAt });
    const result = await this.options.sender.send(request);
    await this.options.deliveries.insertAttempted({
      id: deliveryId,
      tenantId: actor.tenantId,
      webhookId: webhook.id,
      eventId: event.id,
      eventType,
      eventCreatedAt: new Date(event.created_at),
      payload: body,
      startedAt,
      result,
      workerId: this.options.workerId,
    });
    return { deliveryId, result };
  }

  async list(actor: Actor, webhookId: string, page: CursorPage): Promise<DeliveryPage> {
    requireAccess(actor, ACCESS.webhooks.read);
    if (!(await this.options.webhooks.find(actor.tenantId, webhookId))) throw DomainError.notFound('Webhook');
    const { items, total, hasMore } = await this.options.deliveries.list(actor.tenantId, webhookId, page.limit, page.after);
    const last = items.at(-1)?.delivery;
    return { items, total, nextCursor: hasMore && last ? encodeCursor({ createdAt: last.createdAt, id: last.id }) : undefined };
  }

  /** One delivery of the endpoint with its whole attempt log; another webhook's or tenant's is not found. */
  async get(actor: Actor, webhookId: string, deliveryId: string): Promise<DeliveryWithAttempts> {
    requireAccess(actor, ACCESS.webhooks.read);
    const found = await this.options.deliveries.find(actor.tenantId, webhookId, deliveryId);
    if (!found) throw DomainError.notFound('Delivery');
    return found;
  }

  /** A replay: due at once (once the endpoint is active), the attempt count continuing. */
  async retry(actor: Actor, webhookId: string, deliveryId: string): Promise<DeliveryWithAttempts> {
    requireAccess(actor, ACCESS.webhooks.write);
    if (!(await this.options.deliveries.replay(actor.tenantId, webhookId, deliveryId))) throw DomainError.notFound('Delivery');
    const replayed = await this.options.deliveries.find(actor.tenantId, webhookId, deliveryId);
    this.options.wake();
    if (!replayed) throw DomainError.notFound('Delivery');
    return replayed;
  }
}
