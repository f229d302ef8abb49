import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { callAs } from '../../../../../http/calls.js';
import { SuccessSchema, TenantQuery } from '../../../../../http/schemas.js';
import {
  metadataJson,
  receiverStatus,
  TestOutcome,
  TestWebhookBody,
  UpdateWebhookBody,
  webhookBody,
  WebhookParams,
  WebhookSchema,
  WebhookWithSecret,
  withSecret,
} from '../schemas.js';

/** /webhooks/{webhook_id}: one webhook. Another tenant's webhook is 404, as an absent one. */
const webhookItemRoutes: FastifyPluginCallbackZod = (app, _options, done) => {
  const tags = ['webhooks'];

  app.get(
    '',
    {
      schema: {
        operationId: 'getWebhook',
        tags,
        summary: 'Get a webhook (without its secret)',
        params: WebhookParams,
        querystring: TenantQuery,
        response: { 200: WebhookSchema },
      },
    },
    async (request) => {
      const answer = await app.webhooks.service.getWebhook({ webhookId: request.params.webhook_id }, callAs(request));
      return webhookBody(answer.webhook);
    },
  );

  app.patch(
    '',
    {
      schema: {
        operationId: 'updateWebhook',
        tags,
        summary: 'Change a webhook: only the fields sent change',
        description: 'The rules of creation apply to url and events. The secret changes only by rotate-secret.',
        params: WebhookParams,
        querystring: TenantQuery,
        body: UpdateWebhookBody,
        response: { 200: WebhookSchema },
      },
    },
    async (request) => {
      const { url, events, metadata, description } = request.body;
      const answer = await app.webhooks.service.updateWebhook(
        {
          webhookId: request.params.webhook_id,
          url,
          setEvents: events !== undefined,
          events: events ?? [],
          metadataJson: metadataJson(metadata),
          description,
        },
        callAs(request),
      );
      return webhookBody(answer.webhook);
    },
  );

  app.delete(
    '',
    {
      schema: {
        operationId: 'deleteWebhook',
        tags,
        summary: 'Delete a webhook; deliveries still pending to it are dropped',
        params: WebhookParams,
        querystring: TenantQuery,
        response: { 200: SuccessSchema },
      },
    },
    async (request) => {
      await app.webhooks.service.deleteWebhook({ webhookId: request.params.webhook_id }, callAs(request));
      return { success: true as const, message: 'Webhook deleted.' };
    },
  );

  app.post(
    '/enable',
    {
      schema: {
        operationId: 'enableWebhook',
        tags,
        summary: 'Re-activate a failed webhook (idempotent on an active one)',
        params: WebhookParams,
        querystring: TenantQuery,
        response: { 200: WebhookSchema },
      },
    },
    async (request) => {
      const answer = await app.webhooks.service.enableWebhook({ webhookId: request.params.webhook_id }, callAs(request));
      return webhookBody(answer.webhook);
    },
  );

  app.post(
    '/rotate-secret',
    {
      schema: {
        operationId: 'rotateWebhookSecret',
        tags,
        summary: 'Replace the signing secret with a new generated one, returned in this response only',
        params: WebhookParams,
        querystring: TenantQuery,
        response: { 200: WebhookWithSecret },
      },
    },
    async (request) => {
      const rotated = await app.webhooks.service.rotateSecret({ webhookId: request.params.webhook_id }, callAs(request));
      return withSecret(rotated);
    },
  );

  app.post(
    '/test',
    {
      schema: {
        operationId: 'testWebhook',
        tags,
        summary: 'Send one synthetic event now, once (no retries), and answer with the outcome',
        description: 'The attempt is recorded in the delivery log. A receiver that fails is still 200 here, with success false.',
        params: WebhookParams,
        querystring: TenantQuery,
        body: TestWebhookBody,
        response: { 200: TestOutcome },
      },
    },
    async (request) => {
      const outcome = await app.webhooks.service.testWebhook(
        { webhookId: request.params.webhook_id, eventType: request.body.event_type },
        { ...callAs(request), deadlineMs: app.config.WEBHOOK_TEST_DEADLINE_MS },
      );
      return {
        success: outcome.success,
        delivery_id: outcome.deliveryId,
        response_status: receiverStatus(outcome.responseStatus),
        response_time_ms: outcome.responseTimeMs,
        ...(outcome.error === undefined ? {} : { error: outcome.error }),
      };
    },
  );
  done();
};

export default webhookItemRoutes;
