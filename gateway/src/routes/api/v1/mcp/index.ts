import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { TenantQuery } from '../../../../http/schemas.js';
import { answerMcp, methodNotAllowed } from '../../../../mcp/http.js';
import { JsonRpcErrorSchema, McpBadRequest, McpMessageBody, McpResponseSchema } from './schemas.js';

const TOOLS_TEXT =
  'Tools, each needing what its REST route needs: list_agents (agents:read), chat_with_agent (member, agents:write), search_memory (memory:read), add_memory (member, memory:write), list_workflows (workflows:read), run_workflow (member, workflows:execute).';

const NOT_ALLOWED = { 405: JsonRpcErrorSchema };

/**
 * /mcp: the platform as an MCP server over Streamable HTTP, stateless (decisions §12.11). Behind the
 * same hooks as every route: authenticated like REST, counted against the tenant's rate limit.
 */
const mcpRoutes: FastifyPluginCallbackZod = (app, _options, done) => {
  const tags = ['mcp'];

  app.post(
    '',
    {
      schema: {
        operationId: 'postMcpMessage',
        tags,
        summary: 'Send an MCP message (JSON-RPC 2.0) to the platform as an MCP server',
        description: [
          'The Model Context Protocol over Streamable HTTP, stateless: no session id, no event stream; each request is one JSON-RPC message and is answered with JSON.',
          'Send `Accept: application/json, text/event-stream` (406 otherwise) and `Content-Type: application/json`.',
          'Every request counts against the rate limit, as a REST request does. GET and DELETE answer 405 with `Allow: POST`: there is no event stream to open and no session to end.',
          TOOLS_TEXT,
          'A tool that fails answers 200 with `isError: true` and the Error object as structuredContent (e.g. forbidden, validation_error naming the argument, not_found).',
        ].join(' '),
        querystring: TenantQuery,
        body: McpMessageBody,
        response: {
          200: McpResponseSchema,
          202: z.null().describe('A notification (initialized, cancelled) was accepted; no body.'),
          400: McpBadRequest,
          406: JsonRpcErrorSchema.describe('The Accept header does not list both application/json and text/event-stream.'),
        },
      },
    },
    async (request, reply) => {
      await answerMcp(request, reply);
    },
  );

  // Routes (so the policy table and its guard cover them) but not operations: they only refuse,
  // so they stay out of the OpenAPI document and the generated client; POST's description says so.
  for (const method of ['GET', 'DELETE'] as const) {
    app.route({
      method,
      url: '',
      schema: { hide: true, querystring: TenantQuery, response: NOT_ALLOWED },
      handler: async (_request, reply) => {
        await methodNotAllowed(reply);
      },
    });
  }
  done();
};

export default mcpRoutes;
