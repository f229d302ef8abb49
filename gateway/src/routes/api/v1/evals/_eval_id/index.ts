import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { callAs } from '../../../../../http/calls.js';
import { errorResponses } from '../../../../../http/error-responses.js';
import { TenantQuery } from '../../../../../http/schemas.js';
import { evalBody, EvalParams, EvalResultPage, evalResultBody, EvalResultsQuery, EvalSchema } from '../schemas.js';

/** /evals/{eval_id}: one eval and its results. Another tenant's eval is 404, as an absent one. */
const evalItemRoutes: FastifyPluginCallbackZod = (app, _options, done) => {
  const tags = ['evals'];

  app.get(
    '',
    {
      schema: {
        operationId: 'getEval',
        tags,
        summary: 'Get an eval: its status, progress and summary per scorer',
        params: EvalParams,
        querystring: TenantQuery,
        response: { 200: EvalSchema, ...errorResponses({ not_found: 'No such eval in the tenant.' }) },
      },
    },
    async (request) => evalBody((await app.agentMemory.evals.getEval({ evalId: request.params.eval_id }, callAs(request))).eval),
  );

  app.get(
    '/results',
    {
      schema: {
        operationId: 'listEvalResults',
        tags,
        summary: "List an eval's results per item, in the dataset's order, cursor-paged",
        params: EvalParams,
        querystring: EvalResultsQuery,
        response: { 200: EvalResultPage, ...errorResponses({ not_found: 'No such eval in the tenant.' }) },
      },
    },
    async (request) => {
      const { limit, cursor } = request.query;
      const answer = await app.agentMemory.evals.listEvalResults({ evalId: request.params.eval_id, page: { limit, cursor } }, callAs(request));
      return { items: answer.results.map(evalResultBody), next_cursor: answer.nextCursor ?? null };
    },
  );
  done();
};

export default evalItemRoutes;
