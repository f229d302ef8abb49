import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { callAs } from '../../../../http/calls.js';
import { TenantQuery } from '../../../../http/schemas.js';
import { FeedbackBody, RunDetailSchema, runDetailBody, RunParams, runBody, RunSchema } from './schemas.js';

/** /runs/{run_id}: one agent turn with its steps (decisions §16), and the score people give it. */
const runRoutes: FastifyPluginCallbackZod = (app, _options, done) => {
  const tags = ['runs'];

  app.get(
    '/:run_id',
    {
      schema: {
        operationId: 'getRun',
        tags,
        summary: 'Get a run with its steps: retrieval, model rounds, tool calls, approvals, extraction',
        description: "Steps are in order, each with its start and duration. A tool step's arguments, result and error are cut at 4 KiB each. Another tenant's run is 404.",
        params: RunParams,
        querystring: TenantQuery,
        response: { 200: RunDetailSchema },
      },
    },
    async (request) => runDetailBody((await app.agentMemory.runs.getRun({ runId: request.params.run_id }, callAs(request))).run),
  );

  app.post(
    '/:run_id/feedback',
    {
      schema: {
        operationId: 'setRunFeedback',
        tags,
        summary: 'Score a run: -1, 0 or 1 with an optional comment; the last score wins',
        description: 'Stored with who gave it and when; summed in the agent\'s stats as feedback_mean.',
        params: RunParams,
        querystring: TenantQuery,
        body: FeedbackBody,
        response: { 200: RunSchema },
      },
    },
    async (request) => {
      const { score, comment } = request.body;
      return runBody((await app.agentMemory.runs.setRunFeedback({ runId: request.params.run_id, score, comment }, callAs(request))).run);
    },
  );
  done();
};

export default runRoutes;
