import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { callAs } from '../../../../../../../../../http/calls.js';
import { errorResponses } from '../../../../../../../../../http/error-responses.js';
import { decisionComment, TenantQuery } from '../../../../../../../../../http/schemas.js';
import { executionBody, ExecutionNodeParams, ExecutionSchema } from '../../../../../schemas.js';

const DecisionBody = z
  .object({ comment: decisionComment('shown on the node as `comment`') })
  // A bare POST decides too (Fastify reads no body as null): nothing in the body is required.
  .nullish()
  .meta({ examples: [{ comment: 'Refund approved by the support lead.' }] });

/** The two decisions (decisions §13), one route each, alike but for the answer they give. */
const DECISIONS = [
  { path: '/approve', approved: true, operationId: 'approveWorkflowNode', summary: 'Approve a waiting approval node; the execution goes on' },
  { path: '/reject', approved: false, operationId: 'rejectWorkflowNode', summary: 'Reject a waiting approval node; the execution goes on with approved false' },
] as const;

const DESCRIPTION =
  'The node completes with output {approved, decided_by, comment, decided_at} and the execution continues after it (a condition on nodes.<id>.output.approved can route a rejection). Exactly one decision lands on a node: any other, racing or later, or one after the time-out, is 409.';

/** /workflows/{workflow_id}/executions/{execution_id}/nodes/{node_id}/approve and /reject. */
const nodeDecisionRoutes: FastifyPluginCallbackZod = (app, _options, done) => {
  for (const decision of DECISIONS) {
    app.post(
      decision.path,
      {
        schema: {
          operationId: decision.operationId,
          tags: ['workflows'],
          summary: decision.summary,
          description: DESCRIPTION,
          params: ExecutionNodeParams,
          querystring: TenantQuery,
          body: DecisionBody,
          response: {
            200: ExecutionSchema,
            ...errorResponses({
              not_found: 'No such workflow, execution of it, or node in its graph.',
              conflict: 'The node is no approval node, is not waiting (decided already, timed out), or the execution has finished.',
            }),
          },
        },
      },
      async (request) => {
        const { workflow_id, execution_id, node_id } = request.params;
        const comment = request.body?.comment;
        const answer = await app.workflowRunner.executions.decideApproval(
          { workflowId: workflow_id, executionId: execution_id, nodeId: node_id, approved: decision.approved, comment },
          callAs(request),
        );
        return executionBody(answer.execution);
      },
    );
  }
  done();
};

export default nodeDecisionRoutes;
