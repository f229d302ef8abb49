import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { callAs } from '../../../../http/calls.js';
import { PageQuery, pageOf, TenantQuery } from '../../../../http/schemas.js';
import { CreateWebhookBody, metadataJson, webhookBody, WebhookSchema, WebhookWithSecret, withSecret } from './schemas.js';

/**
 * /webhooks: the tenant's webhook endpoints, kept by the webhook-dispatcher service. Anyone in the
 * tenant reads them (keys: webhooks:read); admins and owners manage them (keys: webhooks:write).
 */
const webhookRoutes: FastifyPluginCallbackZod = (app, _options, done) => {
  app.get(
    '',
    {
      schema: {
        operationId: 'listWebhooks',
        tags: ['webhooks'],
        summary: 'List the webhooks of the tenant, newest first',
        querystring: PageQuery,
        response: { 200: pageOf(WebhookSchema) },
      },
    },
    async (request) => {
      const { page, per_page } = request.query;
      const answer = await app.webhooks.service.listWebhooks({ page: { page, perPage: per_page } }, callAs(request));
      return { items: answer.items.map(webhookBody), total: answer.total, page, per_page };
    },
  );

  app.post(
    '',
    {
      schema: {
        operationId: 'createWebhook',
        tags: ['webhooks'],
        summary: 'Register a webhook; its signing secret is in this response (and after a rotation) only',
        description:
          'url must be https on a public address; events are catalogue types or "*"; a supplied secret is 16..128 printable characters. Breaking these is 422 validation_error naming the field.',
        querystring: TenantQuery,
        body: CreateWebhookBody,
        response: { 201: WebhookWithSecret },
      },
    },
    async (request, reply) => {
      const { url, events, secret, metadata, description } = request.body;
      const created = await app.webhooks.service.createWebhook(
        { url, events, secret, metadataJson: metadataJson(metadata), description },
        callAs(request),
      );
      return reply.code(201).send(withSecret(created));
    },
  );
  done();
};

export default webhookRoutes;
