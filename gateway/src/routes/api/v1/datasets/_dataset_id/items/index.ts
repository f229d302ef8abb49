import { characters, CHAT_MESSAGE_MAX, DATASET_EXPECTED_MAX, DATASET_ITEMS_PER_CALL_MAX, END_USER_ID_MAX } from '@agent-platform/kit';
import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { callAs } from '../../../../../../http/calls.js';
import { errorResponses } from '../../../../../../http/error-responses.js';
import { SuccessSchema, TenantQuery } from '../../../../../../http/schemas.js';
import {
  AddDatasetItemsBody,
  DatasetItemBatchSchema,
  datasetItemBody,
  DatasetItemPage,
  DatasetItemParams,
  DatasetItemSchema,
  DatasetItemsQuery,
  DatasetParams,
  newItemOf,
} from '../../schemas.js';

/** /datasets/{dataset_id}/items: the inputs of one dataset, newest first. */
const datasetItemsRoutes: FastifyPluginCallbackZod = (app, _options, done) => {
  const tags = ['datasets'];

  app.post(
    '',
    {
      schema: {
        operationId: 'addDatasetItems',
        tags,
        summary: `Add one item, or a batch of up to ${characters(DATASET_ITEMS_PER_CALL_MAX)}, all or none`,
        description: `Send one item ({input, expected?, metadata?}: answers the item) or {items: [...]} (1..${characters(DATASET_ITEMS_PER_CALL_MAX)}: answers {items}, in the order sent). input.message 1..${characters(CHAT_MESSAGE_MAX)} characters, not blank; input.user_id 1..${END_USER_ID_MAX} characters, not blank, no control characters (as a chat turn's); expected up to ${characters(DATASET_EXPECTED_MAX)} characters; metadata an object of up to 16 KiB. One faulty item refuses the whole batch: 422 names every fault by position (items[3].input.message) and nothing is stored. The 1 MiB body limit bounds a batch too (413).`,
        params: DatasetParams,
        querystring: TenantQuery,
        body: AddDatasetItemsBody,
        response: {
          201: z.union([DatasetItemSchema, DatasetItemBatchSchema]).describe('The item, when one was sent; {items} for a batch.'),
          ...errorResponses({
            validation_error: 'Neither or both of input and items, or an item breaks a rule; details name every fault (items[3].input.message) and nothing is stored.',
            not_found: 'No such dataset in the tenant.',
          }),
        },
      },
    },
    async (request, reply) => {
      const { input, expected, metadata, items } = request.body;
      const datasetId = request.params.dataset_id;
      const call = callAs(request);
      if (items !== undefined) {
        const answer = await app.agentMemory.datasets.addDatasetItems({ datasetId, batch: { items: items.map(newItemOf) } }, call);
        return reply.code(201).send({ items: answer.items.map(datasetItemBody) });
      }
      // The body's check lets input through alone when items is absent.
      const answer = await app.agentMemory.datasets.addDatasetItems({ datasetId, item: newItemOf({ input: input!, expected, metadata }) }, call);
      const [added] = answer.items;
      if (!added) throw new Error('agent-memory answered without the item.');
      return reply.code(201).send(datasetItemBody(added));
    },
  );

  app.get(
    '',
    {
      schema: {
        operationId: 'listDatasetItems',
        tags,
        summary: 'List the items of a dataset, newest first, cursor-paged',
        params: DatasetParams,
        querystring: DatasetItemsQuery,
        response: { 200: DatasetItemPage, ...errorResponses({ not_found: 'No such dataset in the tenant.' }) },
      },
    },
    async (request) => {
      const { limit, cursor } = request.query;
      const answer = await app.agentMemory.datasets.listDatasetItems({ datasetId: request.params.dataset_id, page: { limit, cursor } }, callAs(request));
      return { items: answer.items.map(datasetItemBody), total: answer.total, next_cursor: answer.nextCursor ?? null };
    },
  );

  app.delete(
    '/:item_id',
    {
      schema: {
        operationId: 'deleteDatasetItem',
        tags,
        summary: 'Delete one item of a dataset',
        params: DatasetItemParams,
        querystring: TenantQuery,
        response: { 200: SuccessSchema, ...errorResponses({ not_found: 'No such dataset in the tenant, or no such item in it.' }) },
      },
    },
    async (request) => {
      const { dataset_id, item_id } = request.params;
      await app.agentMemory.datasets.deleteDatasetItem({ datasetId: dataset_id, itemId: item_id }, callAs(request));
      return { success: true as const, message: 'Dataset item deleted.' };
    },
  );
  done();
};

export default datasetItemsRoutes;
