import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { mcpServerFor } from './server.js';

/** The request headers the Streamable HTTP transport reads; the rest stay with Fastify. */
const TRANSPORT_HEADERS = ['accept', 'content-type', 'mcp-protocol-version', 'mcp-session-id', 'last-event-id'] as const;

/** The URL only labels the request for the transport (it routes nothing): any fixed origin will do. */
const ORIGIN = 'http://gateway.invalid';

/** JSON-RPC's implementation-defined server error, the code the SDK's transport gives its own refusals. */
const SERVER_ERROR = -32000;

/** A JSON-RPC error with no request to answer (`id: null`), as the MCP transport words its own. */
export function jsonRpcError(code: number, message: string) {
  return { jsonrpc: '2.0' as const, error: { code, message }, id: null };
}

function transportRequest(request: FastifyRequest): Request {
  const headers = new Headers();
  for (const name of TRANSPORT_HEADERS) {
    const value = request.headers[name];
    if (typeof value === 'string') headers.set(name, value);
  }
  return new Request(new URL(request.url, ORIGIN), { method: request.method, headers });
}

/**
 * POST /mcp (decisions §12.11): the request has been authenticated, counted against the tenant's
 * rate limit and parsed by the route's hooks like any REST request. A fresh MCP server and
 * Streamable HTTP transport answer it (stateless, JSON responses rather than an event stream:
 * each request carries one message and gets one answer), and both are closed with the request.
 * The web-standard transport hands back a Response, sent through the reply as any route's body,
 * so the rate-limit and request-id headers and Fastify's hooks apply unchanged.
 */
export async function answerMcp(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  // A batch would run many calls for the price of one request against the rate limit; JSON-RPC
  // batches left MCP in its 2025-06-18 revision, and the SDK's client never sends them.
  if (Array.isArray(request.body)) {
    await reply.code(400).send(jsonRpcError(ErrorCode.InvalidRequest, 'Batches are not supported: send one JSON-RPC message per request.'));
    return;
  }
  const server = mcpServerFor(request);
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  try {
    await server.connect(transport);
    const response = await transport.handleRequest(transportRequest(request), { parsedBody: request.body });
    reply.code(response.status);
    response.headers.forEach((value, name) => {
      reply.header(name, value);
    });
    // A notification is answered 202 without a body; a request with the JSON-RPC response's text.
    await reply.send(response.body === null ? undefined : await response.text());
  } finally {
    await server.close();
  }
}

/**
 * GET and DELETE /mcp: 405, as the MCP specification has a server without a standalone event
 * stream (GET) or sessions to end (DELETE) answer; its clients read 405 so and carry on.
 */
export async function methodNotAllowed(reply: FastifyReply): Promise<void> {
  await reply
    .code(405)
    .header('allow', 'POST')
    .send(jsonRpcError(SERVER_ERROR, 'Method not allowed: this MCP server is stateless, with no event stream to open and no session to end; send JSON-RPC messages with POST.'));
}
