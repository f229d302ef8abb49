import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { callAs } from '../../../../../../http/calls.js';
import { errorResponses } from '../../../../../../http/error-responses.js';
import { PageQuery, TenantQuery } from '../../../../../../http/schemas.js';
import { VersionParams, versionBody, versionSummaryBody, WorkflowParams, WorkflowSchema, workflowBody, WorkflowVersionPage, WorkflowVersionSchema } from '../../schemas.js';

/**
 * /workflows/{workflow_id}/versions (decisions §13.1): every graph the workflow has had, newest
 * first. Reading them is reading the workflow; restoring one is changing it.
 */
const versionRoutes: FastifyPluginCallbackZod = (app, _options, done) => {
  const tags = ['workflows'];
  const notFound = errorResponses({ not_found: 'No such workflow in the tenant, or no such version of it.' });

  app.get(
    '',
    {
      schema: {
        operationId: 'listWorkflowVersions',
        tags,
        summary: 'List the versions of a workflow, newest first, without their graphs',
        params: WorkflowParams,
        querystring: PageQuery,
        response: { 200: WorkflowVersionPage },
      },
    },
    async (request) => {
      const { page, per_page } = request.query;
      const answer = await app.workflowRunner.workflows.listWorkflowVersions({ workflowId: request.params.workflow_id, page: { page, perPage: per_page } }, callAs(request));
      return { items: answer.items.map(versionSummaryBody), total: answer.total, page, per_page };
    },
  );

  app.get(
    '/:version',
    {
      schema: {
        operationId: 'getWorkflowVersion',
        tags,
        summary: 'Get one version of a workflow with its graph',
        params: VersionParams,
        querystring: TenantQuery,
        response: { 200: WorkflowVersionSchema, ...notFound },
      },
    },
    async (request) => {
      const { workflow_id, version } = request.params;
      return versionBody((await app.workflowRunner.workflows.getWorkflowVersion({ workflowId: workflow_id, version }, callAs(request))).version);
    },
  );

  app.post(
    '/:version/restore',
    {
      schema: {
        operationId: 'restoreWorkflowVersion',
        tags,
        summary: "Make a new version whose graph is this version's",
        description:
          'The workflow gets the graph, and the trigger type, inbound path and schedule that come from it, as a PUT of that graph would, as the next version; restoring the current graph makes one too. The status is kept, and executions already running finish on their own version.',
        params: VersionParams,
        querystring: TenantQuery,
        response: {
          200: WorkflowSchema,
          ...notFound,
          ...errorResponses({ validation_error: 'The graph no longer passes: `details` names each field, e.g. nodes[0].config.agent_id for an agent deleted since.' }),
        },
      },
    },
    async (request) => {
      const { workflow_id, version } = request.params;
      const answer = await app.workflowRunner.workflows.restoreWorkflowVersion({ workflowId: workflow_id, version }, callAs(request));
      return workflowBody(answer.workflow, app.config.WEBHOOK_HOST);
    },
  );
  done();
};

export default versionRoutes;
