import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { callAs } from '../../../../http/calls.js';
import { errorResponses } from '../../../../http/error-responses.js';
import { PageQuery, pageOf, TenantQuery } from '../../../../http/schemas.js';
import { TOOL_KINDS } from '../../../../generated/kinds.js';
import { CreateToolBody, toolBody, toolFields, ToolSchema, typesWhose } from './schemas.js';

/**
 * /tools: the tenant's tools (decisions §12), kept by the agent-memory service. Anyone in the
 * tenant reads them (keys: tools:read); members and above create and change them (keys: tools:write).
 */
const toolRoutes: FastifyPluginCallbackZod = (app, _options, done) => {
  app.get(
    '',
    {
      schema: {
        operationId: 'listTools',
        tags: ['tools'],
        summary: 'List the tools of the tenant, newest first',
        querystring: PageQuery,
        response: { 200: pageOf(ToolSchema) },
      },
    },
    async (request) => {
      const { page, per_page } = request.query;
      const answer = await app.agentMemory.tools.listTools({ page: { page, perPage: per_page } }, callAs(request));
      return { items: answer.tools.map(toolBody), total: answer.total, page, per_page };
    },
  );

  app.post(
    '',
    {
      schema: {
        operationId: 'createTool',
        tags: ['tools'],
        summary: 'Create a tool that agents can name in their tools',
        description:
          `name matches ^[a-z][a-z0-9_]{0,63}$ and is unique in the tenant (409 conflict when taken); description up to 1,024 characters; config per type (${TOOL_KINDS.map((kind) => `${kind.type}: ${kind.config}`).join('; ')}); input_schema a JSON Schema that compiles (draft 2020-12), required for ${typesWhose('own').join(' and ')}, refused for ${typesWhose('discovered').join(' and ')}. Breaking these is 422 validation_error naming each field (config.<key> for a config key). An mcp server is asked for its tools (discovered) before the answer, within 30 s by default; one that cannot be reached, fails or times out is 422 naming config.url.`,
        querystring: TenantQuery,
        body: CreateToolBody,
        response: { 201: ToolSchema, ...errorResponses({ conflict: 'A tool of this name already exists in the tenant.' }) },
      },
    },
    async (request, reply) => {
      // Waits for an mcp tool's server to list its tools.
      const created = await app.agentMemory.tools.createTool(toolFields(request.body), { ...callAs(request), deadlineMs: app.config.TOOL_DEADLINE_MS });
      return reply.code(201).send(toolBody(created.tool));
    },
  );
  done();
};

export default toolRoutes;
