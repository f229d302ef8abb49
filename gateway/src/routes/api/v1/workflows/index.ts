import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { callAs } from '../../../../http/calls.js';
import { PageQuery, TenantQuery } from '../../../../http/schemas.js';
import { CreateWorkflowBody, graphJson, workflowBody, WorkflowPage, WorkflowSchema, workflowSummaryBody } from './schemas.js';

/**
 * /workflows: the tenant's workflows, kept by the workflow-runner. Anyone in the tenant reads them
 * (keys: workflows:read); members and above create and change them (keys: workflows:write).
 */
const workflowRoutes: FastifyPluginCallbackZod = (app, _options, done) => {
  app.get(
    '',
    {
      schema: {
        operationId: 'listWorkflows',
        tags: ['workflows'],
        summary: 'List the workflows of the tenant, newest first',
        querystring: PageQuery,
        response: { 200: WorkflowPage },
      },
    },
    async (request) => {
      const { page, per_page } = request.query;
      const answer = await app.workflowRunner.workflows.listWorkflows({ page: { page, perPage: per_page } }, callAs(request));
      return { items: answer.items.map((workflow) => workflowSummaryBody(workflow, app.config.WEBHOOK_HOST)), total: answer.total, page, per_page };
    },
  );

  app.post(
    '',
    {
      schema: {
        operationId: 'createWorkflow',
        tags: ['workflows'],
        summary: 'Create a workflow; it starts as draft, at version 1',
        description:
          'The graph is validated as a whole (decisions §7): each problem is a 422 validation_error detail naming its field, e.g. nodes[2].config.path or nodes[1].config.rules[0].if for a CEL rule that does not compile. Each agent node must name an agent of the tenant (nodes[i].config.agent_id). The workflow starts at version 1.',
        querystring: TenantQuery,
        body: CreateWorkflowBody,
        response: { 201: WorkflowSchema },
      },
    },
    async (request, reply) => {
      const { name, description, nodes, edges } = request.body;
      const created = await app.workflowRunner.workflows.createWorkflow(
        { name, description, nodesJson: graphJson(nodes) ?? '[]', edgesJson: graphJson(edges) ?? '[]' },
        callAs(request),
      );
      return reply.code(201).send(workflowBody(created.workflow, app.config.WEBHOOK_HOST));
    },
  );
  done();
};

export default workflowRoutes;
