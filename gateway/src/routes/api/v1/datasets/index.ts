import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { callAs } from '../../../../http/calls.js';
import { PageQuery, pageOf, TenantQuery } from '../../../../http/schemas.js';
import { CreateDatasetBody, datasetBody, DatasetSchema } from './schemas.js';

/**
 * /datasets: the tenant's datasets (decisions §16), kept by the agent-memory service, where evals
 * run their items. Anyone in the tenant reads them (keys: agents:read); members and above create
 * and delete them (keys: agents:write).
 */
const datasetRoutes: FastifyPluginCallbackZod = (app, _options, done) => {
  const tags = ['datasets'];

  app.get(
    '',
    {
      schema: {
        operationId: 'listDatasets',
        tags,
        summary: 'List the datasets of the tenant, newest first',
        querystring: PageQuery,
        response: { 200: pageOf(DatasetSchema) },
      },
    },
    async (request) => {
      const { page, per_page } = request.query;
      const answer = await app.agentMemory.datasets.listDatasets({ page: { page, perPage: per_page } }, callAs(request));
      return { items: answer.datasets.map(datasetBody), total: answer.total, page, per_page };
    },
  );

  app.post(
    '',
    {
      schema: {
        operationId: 'createDataset',
        tags,
        summary: 'Create a dataset, empty; add its items with addDatasetItems',
        description: 'name 1..200 characters, not blank (names need not be unique); description up to 2,000 characters. Breaking these is 422 naming the field.',
        querystring: TenantQuery,
        body: CreateDatasetBody,
        response: { 201: DatasetSchema },
      },
    },
    async (request, reply) => {
      const created = await app.agentMemory.datasets.createDataset({ name: request.body.name, description: request.body.description }, callAs(request));
      return reply.code(201).send(datasetBody(created.dataset));
    },
  );
  done();
};

export default datasetRoutes;
