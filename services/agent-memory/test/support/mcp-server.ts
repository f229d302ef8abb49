import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ListToolsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z, type ZodRawShape } from 'zod';

/** A tool of the test server: its arguments as a zod shape, and what a call answers. */
export interface TestTool {
  description?: string;
  input?: ZodRawShape;
  /** Declares an output schema, so its answers carry structuredContent. */
  output?: ZodRawShape;
  run(args: Record<string, unknown>): CallToolResult | Promise<CallToolResult>;
}

export interface McpServerOptions {
  tools?: Record<string, TestTool>;
  /** Sessions with ids (Mcp-Session-Id, GET stream, DELETE), as a stateful server keeps them; default stateless. */
  stateful?: boolean;
  /** tools/list answers this many tools a page, with a cursor to the next. */
  pageSize?: number;
  /** Takes every request and never answers: a server that hangs. */
  silent?: boolean;
  /** Answers 401 to a request without this Authorization. */
  requireAuthorization?: string;
}

export interface SeenRequest {
  method: string;
  headers: IncomingHttpHeaders;
}

export interface McpTestServer {
  /** Its Streamable HTTP endpoint, on loopback. */
  url: string;
  /** Every HTTP request, in order of arrival. */
  requests: SeenRequest[];
  /** Tools are read per session: one added or removed shows in the next tools/list. */
  tools: Map<string, TestTool>;
  /** Resolves when the first request arrives (the silent server's sentinel). */
  reached: Promise<void>;
  /** Ids of the sessions the client ended with DELETE (stateful only). */
  ended: string[];
  close(): Promise<void>;
}

/**
 * A real MCP server (the SDK's McpServer over StreamableHTTPServerTransport) on 127.0.0.1:0, for
 * tests of the platform as an MCP client. The platform must allow private addresses to reach it.
 */
export async function startMcpServer(options: McpServerOptions = {}): Promise<McpTestServer> {
  const tools = new Map(Object.entries(options.tools ?? {}));
  const requests: SeenRequest[] = [];
  const ended: string[] = [];
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const reached = Promise.withResolvers<void>();

  const serve = async (request: IncomingMessage, response: ServerResponse) => {
    requests.push({ method: request.method ?? '', headers: request.headers });
    reached.resolve();
    if (options.silent) return;
    if (options.requireAuthorization !== undefined && request.headers.authorization !== options.requireAuthorization) {
      response.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"invalid_token"}');
      return;
    }
    const sessionId = request.headers['mcp-session-id'];
    const existing = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
    if (existing) {
      if (request.method === 'DELETE' && typeof sessionId === 'string') ended.push(sessionId);
      await existing.handleRequest(request, response);
      return;
    }
    if (request.method !== 'POST') {
      // Stateless servers offer no event stream and no session to end (the SDK's own examples).
      response.writeHead(options.stateful && typeof sessionId === 'string' ? 404 : 405).end();
      return;
    }
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: options.stateful ? () => randomUUID() : undefined,
      onsessioninitialized: (id) => void sessions.set(id, transport),
      onsessionclosed: (id) => void sessions.delete(id),
    });
    const server = buildServer(tools, options.pageSize);
    if (!options.stateful) response.on('close', () => void server.close());
    await server.connect(transport);
    await transport.handleRequest(request, response);
  };

  const http = createServer((request, response) => {
    serve(request, response).catch(() => {
      if (!response.headersSent) response.writeHead(500).end();
    });
  });
  await new Promise<void>((done) => http.listen(0, '127.0.0.1', done));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    requests,
    tools,
    reached: reached.promise,
    ended,
    async close() {
      await Promise.all([...sessions.values()].map((transport) => transport.close()));
      http.closeAllConnections();
      await new Promise<void>((done) => http.close(() => done()));
    },
  };
}

function buildServer(tools: Map<string, TestTool>, pageSize: number | undefined): McpServer {
  const server = new McpServer({ name: 'test-tools', version: '1.0.0' });
  for (const [name, tool] of tools) {
    server.registerTool(
      name,
      { ...(tool.description ? { description: tool.description } : {}), inputSchema: tool.input ?? {}, ...(tool.output ? { outputSchema: tool.output } : {}) },
      (args: Record<string, unknown>) => tool.run(args),
    );
  }
  if (pageSize !== undefined) {
    // McpServer lists all its tools at once; this lists them a page at a time, the cursor being
    // the index of the next one.
    server.server.setRequestHandler(ListToolsRequestSchema, (request) => {
      const start = Number(request.params?.cursor ?? 0);
      const all = [...tools].map(([name, tool]) => ({ name, description: tool.description, inputSchema: z.toJSONSchema(z.object(tool.input ?? {})) as { type: 'object' } }));
      const next = start + pageSize;
      return { tools: all.slice(start, next), ...(next < all.length ? { nextCursor: String(next) } : {}) };
    });
  }
  return server;
}

/** A text answer. */
export function text(value: string): CallToolResult {
  return { content: [{ type: 'text', text: value }] };
}
