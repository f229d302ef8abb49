import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { callAs } from '../../../../../../http/calls.js';
import { errorResponses } from '../../../../../../http/error-responses.js';
import { TenantQuery } from '../../../../../../http/schemas.js';
import {
  acceptedBody,
  ExecutionAccepted,
  executionBody,
  ExecutionPage,
  ExecutionParams,
  ExecutionSchema,
  ExecutionsQuery,
  executionSummaryBody,
  WorkflowParams,
} from '../../schemas.js';

/** /workflows/{workflow_id}/executions: the runs of one workflow, newest first. */
const executionRoutes: FastifyPluginCallbackZod = (app, _options, done) => {
  const tags = ['workflows'];

  app.get(
    '',
    {
      schema: {
        operationId: 'listWorkflowExecutions',
        tags,
        summary: 'List the executions of a workflow, newest first, cursor-paged',
        params: WorkflowParams,
        querystring: ExecutionsQuery,
        response: { 200: ExecutionPage },
      },
    },
    async (request) => {
      const { limit, cursor, status } = request.query;
      const answer = await app.workflowRunner.executions.listExecutions({ workflowId: request.params.workflow_id, page: { limit, cursor }, status }, callAs(request));
      return { items: answer.items.map(executionSummaryBody), total: answer.total, next_cursor: answer.nextCursor || null };
    },
  );

  app.get(
    '/:execution_id',
    {
      schema: {
        operationId: 'getWorkflowExecution',
        tags,
        summary: 'Get an execution with the status, timing and output of each node',
        params: ExecutionParams,
        querystring: TenantQuery,
        response: { 200: ExecutionSchema },
      },
    },
    async (request) => {
      const { workflow_id, execution_id } = request.params;
      return executionBody((await app.workflowRunner.executions.getExecution({ workflowId: workflow_id, executionId: execution_id }, callAs(request))).execution);
    },
  );

  app.post(
    '/:execution_id/cancel',
    {
      schema: {
        operationId: 'cancelWorkflowExecution',
        tags,
        summary: 'Cancel a running execution; its nodes in flight are stopped',
        description: 'An execution that has already finished is 409.',
        params: ExecutionParams,
        querystring: TenantQuery,
        response: { 200: ExecutionSchema, ...errorResponses({ conflict: 'The execution has finished already.' }) },
      },
    },
    async (request) => {
      const { workflow_id, execution_id } = request.params;
      return executionBody((await app.workflowRunner.executions.cancelExecution({ workflowId: workflow_id, executionId: execution_id }, callAs(request))).execution);
    },
  );

  app.post(
    '/:execution_id/retry',
    {
      schema: {
        operationId: 'retryWorkflowExecution',
        tags,
        summary: 'Start a new execution of the current workflow with the same input',
        description: 'The new execution has trigger `retry`. A paused workflow is 409.',
        params: ExecutionParams,
        querystring: TenantQuery,
        response: { 202: ExecutionAccepted, ...errorResponses({ conflict: 'The workflow is paused.' }) },
      },
    },
    async (request, reply) => {
      const { workflow_id, execution_id } = request.params;
      const answer = await app.workflowRunner.executions.retryExecution({ workflowId: workflow_id, executionId: execution_id }, callAs(request));
      return reply.code(202).send(acceptedBody(answer.execution));
    },
  );
  done();
};

export default executionRoutes;
