import { actorOf, present, type Handlers } from '@agent-platform/kit/grpc';
import type { WebhookServiceService, Webhook as WebhookMessage } from '@agent-platform/proto/webhooks/v1';
import { parsePage } from '@agent-platform/kit';
import type { Webhook } from './webhooks.entity.js';
import type { WebhooksService } from './webhooks.service.js';

export const WEBHOOK_SERVICE_NAME = 'agentplatform.webhooks.v1.WebhookService';

type EndpointMethods = 'createWebhook' | 'listWebhooks' | 'getWebhook' | 'updateWebhook' | 'deleteWebhook' | 'enableWebhook' | 'rotateSecret';

/** The endpoint half of WebhookService: translation only; WebhooksService decides. */
export function webhookHandlers(webhooks: WebhooksService): Pick<Handlers<typeof WebhookServiceService>, EndpointMethods> {
  return {
    createWebhook: async (request, ctx) => {
      const { webhook, signingSecret } = await webhooks.create(actorOf(ctx), {
        url: request.url,
        events: request.events,
        secret: present(request.secret),
        metadataJson: present(request.metadataJson),
        description: request.description,
      });
      return { webhook: toMessage(webhook), signingSecret };
    },

    listWebhooks: async (request, ctx) => {
      const { items, total } = await webhooks.list(actorOf(ctx), parsePage(request.page));
      return { items: items.map(toMessage), total };
    },

    getWebhook: async (request, ctx) => ({ webhook: toMessage(await webhooks.get(actorOf(ctx), request.webhookId)) }),

    updateWebhook: async (request, ctx) => {
      const webhook = await webhooks.update(actorOf(ctx), request.webhookId, {
        url: request.url,
        events: request.setEvents ? request.events : undefined,
        metadataJson: present(request.metadataJson),
        description: request.description,
      });
      return { webhook: toMessage(webhook) };
    },

    deleteWebhook: async (request, ctx) => {
      await webhooks.delete(actorOf(ctx), request.webhookId);
      return {};
    },

    enableWebhook: async (request, ctx) => ({ webhook: toMessage(await webhooks.enable(actorOf(ctx), request.webhookId)) }),

    rotateSecret: async (request, ctx) => {
      const { webhook, signingSecret } = await webhooks.rotateSecret(actorOf(ctx), request.webhookId);
      return { webhook: toMessage(webhook), signingSecret };
    },
  };
}

export function toMessage(webhook: Webhook): WebhookMessage {
  return {
    id: webhook.id,
    url: webhook.url,
    events: webhook.events,
    status: webhook.status,
    metadataJson: webhook.metadata,
    description: webhook.description ?? undefined,
    createdAt: webhook.createdAt,
    updatedAt: webhook.updatedAt,
  };
}
