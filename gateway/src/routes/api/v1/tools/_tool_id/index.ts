import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { callAs } from '../../../../../http/calls.js';
import { errorResponses } from '../../../../../http/error-responses.js';
import { SuccessSchema, TenantQuery } from '../../../../../http/schemas.js';
import { ReplaceToolBody, toolBody, toolFields, ToolParams, ToolSchema } from '../schemas.js';

/** /tools/{tool_id}: one tool. Another tenant's tool is 404, as an absent one. */
const toolItemRoutes: FastifyPluginCallbackZod = (app, _options, done) => {
  const tags = ['tools'];

  app.get(
    '',
    {
      schema: {
        operationId: 'getTool',
        tags,
        summary: 'Get a tool; header values read "***"',
        params: ToolParams,
        querystring: TenantQuery,
        response: { 200: ToolSchema },
      },
    },
    async (request) => toolBody((await app.agentMemory.tools.getTool({ toolId: request.params.tool_id }, callAs(request))).tool),
  );

  app.put(
    '',
    {
      schema: {
        operationId: 'replaceTool',
        tags,
        summary: 'Replace a tool: every field left out is reset',
        description:
          'The rules of creation apply, an mcp server is asked for its tools again. Reset means: description none (null), requires_approval false. A header sent as "***" keeps the value stored under that name, so a tool read back can be sent back as it is. The id and created_at stay.',
        params: ToolParams,
        querystring: TenantQuery,
        body: ReplaceToolBody,
        response: { 200: ToolSchema, ...errorResponses({ conflict: 'Another tool of the tenant has this name.' }) },
      },
    },
    async (request) =>
      toolBody((await app.agentMemory.tools.replaceTool({ toolId: request.params.tool_id, ...toolFields(request.body) }, { ...callAs(request), deadlineMs: app.config.TOOL_DEADLINE_MS })).tool),
  );

  app.post(
    '/refresh',
    {
      schema: {
        operationId: 'refreshTool',
        tags,
        summary: "Ask an mcp tool's server for its tools again",
        description:
          'Lists the tools of the MCP server (every page of tools/list) and stores them as discovered; answers the tool. allowed_tools is not checked against the new list: a name the server no longer lists is simply not offered. Only mcp tools discover tools (409 for the others).',
        params: ToolParams,
        querystring: TenantQuery,
        response: {
          200: ToolSchema,
          ...errorResponses({
            conflict: 'The tool is not an mcp tool.',
            upstream_error: 'The MCP server could not be reached, failed or did not answer in time; the stored list is kept.',
          }),
        },
      },
    },
    async (request) => toolBody((await app.agentMemory.tools.refreshTool({ toolId: request.params.tool_id }, { ...callAs(request), deadlineMs: app.config.TOOL_DEADLINE_MS })).tool),
  );

  app.delete(
    '',
    {
      schema: {
        operationId: 'deleteTool',
        tags,
        summary: 'Delete a tool; agents that name it no longer do',
        params: ToolParams,
        querystring: TenantQuery,
        response: { 200: SuccessSchema },
      },
    },
    async (request) => {
      await app.agentMemory.tools.deleteTool({ toolId: request.params.tool_id }, callAs(request));
      return { success: true as const, message: 'Tool deleted, and taken off the agents that named it.' };
    },
  );
  done();
};

export default toolItemRoutes;
