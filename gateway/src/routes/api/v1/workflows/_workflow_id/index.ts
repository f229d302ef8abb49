import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { callAs } from '../../../../../http/calls.js';
import { errorResponses } from '../../../../../http/error-responses.js';
import { SuccessSchema, TenantQuery } from '../../../../../http/schemas.js';
import {
  acceptedBody,
  ExecuteBody,
  ExecutionAccepted,
  executionBody,
  ExecutionSchema,
  graphJson,
  UpdateWorkflowBody,
  workflowBody,
  WorkflowParams,
  WorkflowSchema,
} from '../schemas.js';

/** /workflows/{workflow_id}: one workflow, its lifecycle, and running it. Another tenant's is 404. */
const workflowItemRoutes: FastifyPluginCallbackZod = (app, _options, done) => {
  const tags = ['workflows'];

  app.get(
    '',
    {
      schema: {
        operationId: 'getWorkflow',
        tags,
        summary: 'Get a workflow with its graph and run statistics',
        params: WorkflowParams,
        querystring: TenantQuery,
        response: { 200: WorkflowSchema },
      },
    },
    async (request) => workflowBody((await app.workflowRunner.workflows.getWorkflow({ workflowId: request.params.workflow_id }, callAs(request))).workflow, app.config.WEBHOOK_HOST),
  );

  app.put(
    '',
    {
      schema: {
        operationId: 'updateWorkflow',
        tags,
        summary: 'Change a workflow: the fields sent are replaced, the status is kept',
        description:
          'Executions already running finish on the graph they started with. Nodes or edges that differ from the current graph make the next version; the name or description alone keep it. As on create, each agent node must name an agent of the tenant (422 naming nodes[i].config.agent_id).',
        params: WorkflowParams,
        querystring: TenantQuery,
        body: UpdateWorkflowBody,
        response: { 200: WorkflowSchema },
      },
    },
    async (request) => {
      const { name, description, nodes, edges } = request.body;
      const answer = await app.workflowRunner.workflows.updateWorkflow(
        { workflowId: request.params.workflow_id, name, description, nodesJson: graphJson(nodes), edgesJson: graphJson(edges) },
        callAs(request),
      );
      return workflowBody(answer.workflow, app.config.WEBHOOK_HOST);
    },
  );

  app.delete(
    '',
    {
      schema: {
        operationId: 'deleteWorkflow',
        tags,
        summary: 'Delete a workflow with its executions',
        params: WorkflowParams,
        querystring: TenantQuery,
        response: { 200: SuccessSchema },
      },
    },
    async (request) => {
      await app.workflowRunner.workflows.deleteWorkflow({ workflowId: request.params.workflow_id }, callAs(request));
      return { success: true as const, message: 'Workflow deleted.' };
    },
  );

  app.post(
    '/pause',
    {
      schema: {
        operationId: 'pauseWorkflow',
        tags,
        summary: 'Pause a workflow (from active or draft); idempotent',
        description: 'A paused workflow does not run: execute answers 409, its inbound address 404, its schedule does not tick.',
        params: WorkflowParams,
        querystring: TenantQuery,
        response: { 200: WorkflowSchema },
      },
    },
    async (request) => workflowBody((await app.workflowRunner.workflows.pauseWorkflow({ workflowId: request.params.workflow_id }, callAs(request))).workflow, app.config.WEBHOOK_HOST),
  );

  app.post(
    '/resume',
    {
      schema: {
        operationId: 'resumeWorkflow',
        tags,
        summary: 'Activate a workflow (from draft or paused); idempotent',
        description: 'Only an active workflow answers at its inbound address and ticks on its schedule.',
        params: WorkflowParams,
        querystring: TenantQuery,
        response: { 200: WorkflowSchema },
      },
    },
    async (request) => workflowBody((await app.workflowRunner.workflows.resumeWorkflow({ workflowId: request.params.workflow_id }, callAs(request))).workflow, app.config.WEBHOOK_HOST),
  );

  app.post(
    '/execute',
    {
      schema: {
        operationId: 'executeWorkflow',
        tags,
        summary: 'Run a workflow (draft or active); emits workflow.execution.started',
        description:
          'async true (default): 202 with the execution id at once. async false: waits until the execution finishes, at most 30 s, and answers 200 with the execution (still running if it took longer). A paused workflow is 409.',
        params: WorkflowParams,
        querystring: TenantQuery,
        body: ExecuteBody,
        response: { 200: ExecutionSchema, 202: ExecutionAccepted, ...errorResponses({ conflict: 'The workflow is paused.' }) },
      },
    },
    async (request, reply) => {
      const wait = request.body?.async === false;
      const answer = await app.workflowRunner.executions.executeWorkflow(
        { workflowId: request.params.workflow_id, inputJson: JSON.stringify(request.body?.input ?? {}), wait, waitMs: 0 },
        { ...callAs(request), ...(wait ? { deadlineMs: app.config.EXECUTE_DEADLINE_MS } : {}) },
      );
      return wait ? reply.code(200).send(executionBody(answer.execution)) : reply.code(202).send(acceptedBody(answer.execution));
    },
  );
  done();
};

export default workflowItemRoutes;
