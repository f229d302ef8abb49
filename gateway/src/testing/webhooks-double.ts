import { createLogger, DomainError, parsePage } from '@agent-platform/kit';
import { GrpcServer, requirePrincipal, type CallContext } from '@agent-platform/kit/grpc';
import { WebhookServiceService } from '@agent-platform/proto/webhooks/v1';
import { trace } from '@opentelemetry/api';
import type { RecordedCall } from './identity-double.js';
import { isEventType } from '@agent-platform/kit/events';
import { generatedSecret, semanticErrors, WebhooksModel, type WebhookRow } from './webhooks-model.js';

function checked(fields: Parameters<typeof semanticErrors>[0]): void {
  const errors = semanticErrors(fields);
  if (errors.length > 0) throw DomainError.validation(errors);
}

function validMetadata(json: string | undefined): void {
  if (json === undefined) return;
  const value: unknown = JSON.parse(json);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw DomainError.validation([{ field: 'metadata', message: 'Must be a JSON object.' }]);
  }
}

/** A call as the double received it, request message included. */
export interface WebhookCall extends RecordedCall {
  request: unknown;
}

function cursorOf(id: string): string {
  return Buffer.from(id).toString('base64url');
}

/**
 * A real gRPC server implementing the generated WebhookService over an in-memory model: the gateway
 * talks to it exactly as to the webhook-dispatcher. No HTTP leaves it: a test delivery's outcome
 * follows the URL (see WebhooksModel.attempt).
 */
export class WebhooksDouble {
  readonly model = new WebhooksModel();
  readonly calls: WebhookCall[] = [];
  /** One-shot failures: the next call of the method throws this. */
  readonly faults = new Map<string, Error>();
  /** How long TestWebhook takes (milliseconds): a slow receiver on the far side. */
  testDelayMs = 0;
  private readonly server = new GrpcServer({ logger: createLogger({ service: 'webhooks-double', level: 'silent' }) });

  async start(): Promise<string> {
    this.addService();
    const port = await this.server.listen('127.0.0.1', 0);
    return `127.0.0.1:${port}`;
  }

  stop(): Promise<void> {
    return this.server.stop(1_000);
  }

  callsOf(method: string): WebhookCall[] {
    return this.calls.filter((call) => call.method === method);
  }

  /** Records the call, throws a planted fault, and answers the caller's tenant. */
  private tenantOf(method: string, request: unknown, ctx: CallContext): string {
    this.calls.push({ method, request, principal: ctx.principal, requestId: ctx.requestId, traceId: trace.getActiveSpan()?.spanContext().traceId });
    const fault = this.faults.get(method);
    if (fault) {
      this.faults.delete(method);
      throw fault;
    }
    return requirePrincipal(ctx).tenantId;
  }

  private addService(): void {
    const { model } = this;
    const touch = (row: WebhookRow) => {
      row.updatedAt = new Date();
      return { webhook: WebhooksModel.toWebhook(row) };
    };
    this.server.add('agentplatform.webhooks.v1.WebhookService', WebhookServiceService, {
      createWebhook: async (request, ctx) => {
        const tenantId = this.tenantOf('createWebhook', request, ctx);
        checked({ url: request.url, events: request.events, secret: request.secret });
        validMetadata(request.metadataJson);
        const row = model.addWebhook(tenantId, {
          url: request.url,
          events: request.events,
          secret: request.secret ?? generatedSecret(),
          metadataJson: request.metadataJson ?? '{}',
          description: request.description,
        });
        return Promise.resolve({ webhook: WebhooksModel.toWebhook(row), signingSecret: row.secret });
      },
      listWebhooks: async (request, ctx) => {
        const rows = model.webhooksOf(this.tenantOf('listWebhooks', request, ctx));
        const { perPage, offset } = parsePage(request.page);
        return Promise.resolve({ items: rows.slice(offset, offset + perPage).map((row) => WebhooksModel.toWebhook(row)), total: rows.length });
      },
      getWebhook: async (request, ctx) => {
        const row = model.webhook(this.tenantOf('getWebhook', request, ctx), request.webhookId);
        return Promise.resolve({ webhook: WebhooksModel.toWebhook(row) });
      },
      updateWebhook: async (request, ctx) => {
        const row = model.webhook(this.tenantOf('updateWebhook', request, ctx), request.webhookId);
        checked({ url: request.url, events: request.setEvents ? request.events : undefined });
        validMetadata(request.metadataJson);
        if (request.url !== undefined) row.url = request.url;
        if (request.setEvents) row.events = request.events;
        if (request.metadataJson !== undefined) row.metadataJson = request.metadataJson;
        if (request.description !== undefined) row.description = request.description;
        return Promise.resolve(touch(row));
      },
      deleteWebhook: async (request, ctx) => {
        const row = model.webhook(this.tenantOf('deleteWebhook', request, ctx), request.webhookId);
        model.webhooks.delete(row.id);
        return Promise.resolve({});
      },
      enableWebhook: async (request, ctx) => {
        const row = model.webhook(this.tenantOf('enableWebhook', request, ctx), request.webhookId);
        row.status = 'active';
        return Promise.resolve(touch(row));
      },
      rotateSecret: async (request, ctx) => {
        const row = model.webhook(this.tenantOf('rotateSecret', request, ctx), request.webhookId);
        row.secret = generatedSecret();
        return Promise.resolve({ ...touch(row), signingSecret: row.secret });
      },
      testWebhook: async (request, ctx) => {
        const row = model.webhook(this.tenantOf('testWebhook', request, ctx), request.webhookId);
        if (this.testDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.testDelayMs));
        if (!isEventType(request.eventType)) {
          throw DomainError.validation([{ field: 'event_type', message: `Unknown event type "${request.eventType}".` }]);
        }
        const attempt = WebhooksModel.attempt(row.url, 1);
        const delivered = attempt.outcome === 'delivered';
        const delivery = model.addDelivery(row, {
          eventType: request.eventType,
          status: delivered ? 'delivered' : 'failed',
          attempts: [attempt],
          deliveredAt: delivered ? new Date() : undefined,
          nextAttemptAt: undefined,
        });
        const { responseStatus, responseTimeMs, error } = attempt;
        return Promise.resolve({ success: delivered, deliveryId: delivery.id, responseStatus, responseTimeMs, error });
      },
      listDeliveries: async (request, ctx) => {
        const webhook = model.webhook(this.tenantOf('listDeliveries', request, ctx), request.webhookId);
        const rows = model.deliveriesOf(webhook.id);
        let start = 0;
        const cursor = request.page?.cursor;
        if (cursor !== undefined) {
          const after = rows.findIndex((row) => cursorOf(row.id) === cursor);
          if (after < 0) throw DomainError.validation([{ field: 'cursor', message: 'Unknown cursor.' }]);
          start = after + 1;
        }
        const page = rows.slice(start, start + (request.page?.limit || 20));
        const last = page.at(-1);
        const more = start + page.length < rows.length;
        return Promise.resolve({
          items: page.map((row) => WebhooksModel.toDelivery(row)),
          total: rows.length,
          nextCursor: more && last ? cursorOf(last.id) : undefined,
        });
      },
      getDelivery: async (request, ctx) => {
        const webhook = model.webhook(this.tenantOf('getDelivery', request, ctx), request.webhookId);
        return Promise.resolve({ delivery: WebhooksModel.toDelivery(model.delivery(webhook, request.deliveryId)) });
      },
      retryDelivery: async (request, ctx) => {
        const webhook = model.webhook(this.tenantOf('retryDelivery', request, ctx), request.webhookId);
        const row = model.delivery(webhook, request.deliveryId);
        row.status = 'pending';
        row.nextAttemptAt = new Date();
        return Promise.resolve({ delivery: WebhooksModel.toDelivery(row) });
      },
    });
  }
}
