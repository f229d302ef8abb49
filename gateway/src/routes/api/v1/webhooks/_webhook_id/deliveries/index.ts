import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { callAs } from '../../../../../../http/calls.js';
import { errorResponses } from '../../../../../../http/error-responses.js';
import { TenantQuery } from '../../../../../../http/schemas.js';
import {
  DeliveriesQuery,
  deliveryBody,
  DeliveryPage,
  DeliveryParams,
  DeliverySchema,
  deliveryWithAttemptsBody,
  DeliveryWithAttemptsSchema,
  WebhookParams,
} from '../../schemas.js';

/** /webhooks/{webhook_id}/deliveries: the delivery log of one webhook, newest first, and each delivery's attempts. */
const deliveryRoutes: FastifyPluginCallbackZod = (app, _options, done) => {
  app.get(
    '',
    {
      schema: {
        operationId: 'listWebhookDeliveries',
        tags: ['webhooks'],
        summary: 'List the deliveries of a webhook, newest first, cursor-paged',
        params: WebhookParams,
        querystring: DeliveriesQuery,
        response: { 200: DeliveryPage },
      },
    },
    async (request) => {
      const { limit, cursor } = request.query;
      const answer = await app.webhooks.service.listDeliveries({ webhookId: request.params.webhook_id, page: { limit, cursor } }, callAs(request));
      return { items: answer.items.map(deliveryBody), total: answer.total, next_cursor: answer.nextCursor || null };
    },
  );

  app.get(
    '/:delivery_id',
    {
      schema: {
        operationId: 'getWebhookDelivery',
        tags: ['webhooks'],
        summary: 'Get one delivery with every attempt, oldest first',
        description: "Another webhook's or another tenant's delivery is 404, as an absent one.",
        params: DeliveryParams,
        querystring: TenantQuery,
        response: { 200: DeliveryWithAttemptsSchema, ...errorResponses({ not_found: "No such webhook or delivery; another webhook's delivery is not found either." }) },
      },
    },
    async (request) => {
      const { webhook_id, delivery_id } = request.params;
      const answer = await app.webhooks.service.getDelivery({ webhookId: webhook_id, deliveryId: delivery_id }, callAs(request));
      return deliveryWithAttemptsBody(answer.delivery);
    },
  );

  app.post(
    '/:delivery_id/retry',
    {
      schema: {
        operationId: 'retryWebhookDelivery',
        tags: ['webhooks'],
        summary: 'Replay a delivery: a new attempt now, whatever its status',
        description: 'Accepted, not yet sent: the answer is the delivery with its next attempt scheduled; its outcome shows in the log.',
        params: DeliveryParams,
        querystring: TenantQuery,
        response: { 202: DeliverySchema },
      },
    },
    async (request, reply) => {
      const { webhook_id, delivery_id } = request.params;
      const answer = await app.webhooks.service.retryDelivery({ webhookId: webhook_id, deliveryId: delivery_id }, callAs(request));
      return reply.code(202).send(deliveryBody(answer.delivery));
    },
  );
  done();
};

export default deliveryRoutes;
