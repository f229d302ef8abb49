import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { callAs } from '../../../../http/calls.js';
import { errorResponses } from '../../../../http/error-responses.js';
import { clientFailure } from '../../../../http/errors.js';
import { TenantQuery } from '../../../../http/schemas.js';
import { openEventStream, sendEventStream } from '../../../../http/sse.js';
import { FeedbackBody, RUN_EVENTS_DESCRIPTION, RunDetailSchema, runDetailBody, runEventBody, RunEventsQuery, RunParams, runBody, RunSchema } from './schemas.js';

/** Last-Event-ID as the WHATWG stream sends it back: the id of the last event seen, a whole number here. */
const LastEventId = z.object({ 'last-event-id': z.string().regex(/^\d{1,9}$/).optional().describe('The id of the last event received; the stream resumes after it.') });

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

  app.get(
    '/:run_id/events',
    {
      schema: {
        operationId: 'streamRunEvents',
        tags,
        summary: "Follow a run's events as server-sent events, resumable from Last-Event-ID",
        params: RunParams,
        querystring: RunEventsQuery,
        headers: LastEventId,
        response: {
          200: { description: 'text/event-stream', content: { 'text/event-stream': { schema: z.string().describe(RUN_EVENTS_DESCRIPTION) } } },
        },
      },
    },
    async (request, reply) => {
      const header = request.headers['last-event-id'];
      const after = header === undefined ? request.query.after : Number(header);
      const { config } = request.server;
      const gone = new AbortController();
      reply.raw.once('close', () => {
        if (!reply.raw.writableFinished) gone.abort();
      });
      const events = app.agentMemory.runs.watchRun({ runId: request.params.run_id, after }, { ...callAs(request), deadlineMs: config.MODEL_DEADLINE_MS, signal: gone.signal });
      const body = await openEventStream(
        (async function* () {
          for await (const event of events) yield runEventBody(event);
        })(),
        { failure: (error) => ({ event: 'error', data: clientFailure(error, request, config.BODY_LIMIT_BYTES).body }) },
      );
      return sendEventStream(reply, body);
    },
  );

  app.post(
    '/:run_id/cancel',
    {
      schema: {
        operationId: 'cancelRun',
        tags,
        summary: 'Cancel a queued or running background run',
        description: 'Its turn stops at its next step and keeps nothing it had not stored; a chat turn stops when its caller closes the connection instead.',
        params: RunParams,
        querystring: TenantQuery,
        response: { 200: RunSchema, ...errorResponses({ conflict: 'Not a background run, or it has ended already.' }) },
      },
    },
    async (request) => runBody((await app.agentMemory.runs.cancelRun({ runId: request.params.run_id }, callAs(request))).run),
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
