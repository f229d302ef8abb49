import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { callAs } from '../../../../http/calls.js';
import { errorResponses } from '../../../../http/error-responses.js';
import { pageOf, TenantQuery } from '../../../../http/schemas.js';
import { comparedSideBody, CompareQuery, ComparisonSchema, CreateEvalBody, evalBody, EvalListQuery, EvalSchema, scoreChangeBody } from './schemas.js';

/**
 * /evals: an agent run on a dataset's items and scored (decisions §16), kept by the agent-memory
 * service. Anyone in the tenant reads them (keys: agents:read); members and above begin them
 * (keys: agents:write), and their runs act as whoever began it.
 */
const evalRoutes: FastifyPluginCallbackZod = (app, _options, done) => {
  const tags = ['evals'];

  app.post(
    '',
    {
      schema: {
        operationId: 'createEval',
        tags,
        summary: 'Run an agent on every item of a dataset and score each output',
        description:
          "Answers 202 with the eval, running. Its items are copied as they are now, and each runs as a run of the agent (trigger eval, a session of its own, the item's user_id; it retrieves the end user's memories and extracts none), `concurrency` at a time, acting as the caller and charged as any turn. Each run that ends is scored; when all are, the eval is completed and eval.completed is emitted. It survives the restart of any process. Refused with 422 for a dataset without items or over 5,000, for scorers that compare with `expected` when an item has none, or for a bad scorer (named as `scorers[1].value`); 404 for an unknown dataset, agent or version; 402 without credits.",
        querystring: TenantQuery,
        body: CreateEvalBody,
        response: { 202: EvalSchema, ...errorResponses({ not_found: 'No such dataset, agent or agent version in the tenant.', insufficient_credits: 'The tenant has no credits left.' }) },
      },
    },
    async (request, reply) => {
      const { dataset_id, agent_id, agent_version, scorers, concurrency } = request.body;
      const created = await app.agentMemory.evals.createEval(
        { datasetId: dataset_id, agentId: agent_id, agentVersion: agent_version, scorersJson: JSON.stringify(scorers), concurrency },
        callAs(request),
      );
      return reply.code(202).send(evalBody(created.eval));
    },
  );

  app.get(
    '',
    {
      schema: {
        operationId: 'listEvals',
        tags,
        summary: 'List the evals of the tenant, newest first, with their progress and summary',
        querystring: EvalListQuery,
        response: { 200: pageOf(EvalSchema) },
      },
    },
    async (request) => {
      const { page, per_page, agent_id, dataset_id } = request.query;
      const answer = await app.agentMemory.evals.listEvals({ page: { page, perPage: per_page }, agentId: agent_id, datasetId: dataset_id }, callAs(request));
      return { items: answer.evals.map(evalBody), total: answer.total, page, per_page };
    },
  );

  app.get(
    '/compare',
    {
      schema: {
        operationId: 'compareEvals',
        tags,
        summary: 'Compare two evals of one dataset, item by item: changed items first',
        description: 'Per scorer, both means and the change; per item in both evals, both outputs and verdicts and each score\'s change, largest first. Evals of different datasets are 422.',
        querystring: CompareQuery,
        response: { 200: ComparisonSchema, ...errorResponses({ not_found: 'No such eval in the tenant.' }) },
      },
    },
    async (request) => {
      const { base, candidate, page, per_page } = request.query;
      const answer = await app.agentMemory.evals.compareEvals({ baseEvalId: base, candidateEvalId: candidate, page: { page, perPage: per_page } }, callAs(request));
      return {
        base: evalBody(answer.base),
        candidate: evalBody(answer.candidate),
        scorers: answer.scorers.map(scoreChangeBody),
        improved: answer.improved,
        regressed: answer.regressed,
        unchanged: answer.unchanged,
        items: answer.items.map((item) => ({
          item_id: item.itemId,
          input: { message: item.input?.message ?? '', user_id: item.input?.userId ?? null },
          expected: item.expected ?? null,
          base: comparedSideBody(item.base),
          candidate: comparedSideBody(item.candidate),
          scores: item.scores.map(scoreChangeBody),
          changed: item.changed,
        })),
        total: answer.total,
        page,
        per_page,
      };
    },
  );
  done();
};

export default evalRoutes;
