import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { callAs } from '../../../../../http/calls.js';
import { SuccessSchema, TenantQuery } from '../../../../../http/schemas.js';
import { datasetBody, DatasetParams, DatasetSchema } from '../schemas.js';

/** /datasets/{dataset_id}: one dataset. Another tenant's dataset is 404, as an absent one. */
const datasetItemRoutes: FastifyPluginCallbackZod = (app, _options, done) => {
  const tags = ['datasets'];

  app.get(
    '',
    {
      schema: {
        operationId: 'getDataset',
        tags,
        summary: 'Get a dataset with its item count',
        params: DatasetParams,
        querystring: TenantQuery,
        response: { 200: DatasetSchema },
      },
    },
    async (request) => datasetBody((await app.agentMemory.datasets.getDataset({ datasetId: request.params.dataset_id }, callAs(request))).dataset),
  );

  app.delete(
    '',
    {
      schema: {
        operationId: 'deleteDataset',
        tags,
        summary: 'Delete a dataset and all its items',
        params: DatasetParams,
        querystring: TenantQuery,
        response: { 200: SuccessSchema },
      },
    },
    async (request) => {
      await app.agentMemory.datasets.deleteDataset({ datasetId: request.params.dataset_id }, callAs(request));
      return { success: true as const, message: 'Dataset deleted, with its items.' };
    },
  );
  done();
};

export default datasetItemRoutes;
