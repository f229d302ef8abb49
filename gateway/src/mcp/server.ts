import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyRequest } from 'fastify';
import { authorize, refusalOf } from '../auth/policy.js';
import { callAs } from '../http/calls.js';
import { clientFailure } from '../http/errors.js';
import type { JsonObject, McpTool } from './tool.js';
import { MCP_TOOLS } from './tools.js';

const SERVER_INFO = { name: 'agent-platform', title: 'Agent Platform', version: '1.0.0' };

const INSTRUCTIONS = [
  "Tools of the agent platform, acting in one tenant with the credential's role and API-key scopes.",
  'Find ids with list_agents and list_workflows first. A tool that fails answers isError with',
  'structuredContent {error, message, details?}: error is the REST API\'s code (validation_error,',
  'forbidden, not_found, insufficient_credits, conflict, upstream_error, ...), details names the arguments at fault.',
].join(' ');

const BY_NAME = new Map(MCP_TOOLS.map((tool) => [tool.name, tool]));

/** MCP recommends the text of a structured result beside it, for clients that read text only. */
function result(body: JsonObject, isError: boolean): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(body) }], structuredContent: body, ...(isError ? { isError: true } : {}) };
}

/** Authorises the caller for the tool (its REST route's policy row), then runs it; every failure is a tool error. */
async function callTool(tool: McpTool, args: unknown, request: FastifyRequest): Promise<CallToolResult> {
  try {
    if (!request.principal) throw new Error('POST /mcp reached its handler without a principal.');
    // Before the arguments are read, as REST authorises before it validates a body.
    authorize(request.principal, tool.policy);
    return result(await tool.call(args, { app: request.server, call: callAs(request) }), false);
  } catch (error) {
    // The body REST would answer (decisions §2): 5xx text masked, the unexpected logged with the request id.
    const { body } = clientFailure(error, request, request.server.config.BODY_LIMIT_BYTES);
    return result({ ...body }, true);
  }
}

/**
 * The MCP server of one HTTP request (stateless: a server and a transport per request, so any
 * gateway replica answers any request and nothing outlives it). The low-level Server, not
 * McpServer: McpServer checks a tool's arguments itself and answers a plain-text error without a
 * code, where decisions §12.11 wants validation_error naming each field, after authorisation.
 */
export function mcpServerFor(request: FastifyRequest): Server {
  const server = new Server(SERVER_INFO, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
  // Only what this credential may call, by the rule its calls are checked by: a model is not
  // offered a tool that can only answer forbidden.
  const principal = request.principal;
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: principal ? MCP_TOOLS.filter((tool) => refusalOf(principal, tool.policy) === undefined).map((tool) => tool.definition) : [],
  }));
  server.setRequestHandler(CallToolRequestSchema, async ({ params }) => {
    const tool = BY_NAME.get(params.name);
    // An unknown tool is a protocol error (JSON-RPC invalid params), as the MCP specification has it.
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${params.name}. tools/list names the tools.`);
    return callTool(tool, params.arguments, request);
  });
  // The transport reports malformed requests here as well as answering them: the client's fault, not ours.
  server.onerror = (error) => request.log.debug({ err: error }, 'mcp protocol error');
  return server;
}
