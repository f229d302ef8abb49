import { timedSignal } from '@agent-platform/kit';
import { outboundFetch, OutboundRequestError, type OutboundFetch, type OutboundHttp } from '@agent-platform/kit/security';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { ErrorCode, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';

/** One tool an MCP server listed (`tools/list`), as stored and answered. */
export interface DiscoveredTool {
  name: string;
  description: string | null;
  input_schema: Record<string, unknown>;
}

/** An MCP server as a tool reaches it: its Streamable HTTP endpoint and the headers sent with every request, unsealed. */
export interface McpServerAddress {
  url: string;
  headers: Record<string, string>;
}

/** The server failed, timed out or could not be reached; `message` is fit for whoever configured it. */
export class McpServerError extends Error {
  override readonly name = 'McpServerError';
}

/** What ToolsService asks of an MCP server (decisions §12.5): its tools, every page of them. */
export interface McpDiscovery {
  listTools(server: McpServerAddress): Promise<DiscoveredTool[]>;
}

export interface McpClientOptions {
  /** The guarded HTTP client: every connection goes through the SSRF guard. */
  http: OutboundHttp;
  /** Bound on one whole session (connect, requests, close), ms. */
  timeoutMs: number;
}

// A tools/list page or a tool's result larger than this is refused rather than held in memory.
const MAX_RESPONSE_BYTES = 2 * 1024 * 1024;
// Bounds on discovery, against a server that pages forever or lists without end.
const MAX_PAGES = 32;
const MAX_DISCOVERED_TOOLS = 256;
// A discovered description is shown to the model as a tool's own is (decisions §12.1).
const DESCRIPTION_MAX = 1_024;
const CLIENT_INFO = { name: 'agent-platform', version: '1.0.0' };

/**
 * The platform as an MCP client of users' servers. Each operation is one session: connect,
 * initialise, do the work, end the session and close, all within `timeoutMs` and the caller's
 * signal. Nothing is kept between operations: a tool's server is reached rarely enough, and a
 * session held open would outlive the bounds that make calls safe to run in a chat turn.
 */
export class McpClient implements McpDiscovery {
  private readonly fetch: OutboundFetch;
  private readonly timeoutMs: number;

  constructor(options: McpClientOptions) {
    this.timeoutMs = options.timeoutMs;
    this.fetch = outboundFetch(options.http, { timeoutMs: options.timeoutMs, maxResponseBytes: MAX_RESPONSE_BYTES });
  }

  /** Every tool the server lists, in its order, first of each name kept. Rejects with McpServerError. */
  listTools(server: McpServerAddress, signal?: AbortSignal): Promise<DiscoveredTool[]> {
    return this.session(server, signal, async (client, options) => {
      const tools = new Map<string, DiscoveredTool>();
      let cursor: string | undefined;
      for (let page = 1; ; page += 1) {
        const answer = await client.listTools(cursor === undefined ? {} : { cursor }, options);
        for (const tool of answer.tools) {
          if (tools.has(tool.name)) continue;
          if (tools.size === MAX_DISCOVERED_TOOLS) throw new McpServerError(`the MCP server lists more than ${MAX_DISCOVERED_TOOLS} tools`);
          const description = tool.description ?? null;
          tools.set(tool.name, { name: tool.name, description: description === null ? null : description.slice(0, DESCRIPTION_MAX), input_schema: tool.inputSchema });
        }
        cursor = answer.nextCursor;
        if (cursor === undefined) return [...tools.values()];
        if (page === MAX_PAGES) throw new McpServerError(`the MCP server's tool list goes on for more than ${MAX_PAGES} pages`);
      }
    });
  }

  /** `tools/call`; a tool that reports an error resolves (isError). Rejects with McpServerError. */
  callTool(server: McpServerAddress, name: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<CallToolResult> {
    return this.session(server, signal, (client, options) => client.callTool({ name, arguments: args }, undefined, options) as Promise<CallToolResult>);
  }

  private async session<T>(server: McpServerAddress, signal: AbortSignal | undefined, work: (client: Client, options: RequestOptions) => Promise<T>): Promise<T> {
    const bound = timedSignal(this.timeoutMs, signal, { timeout: () => new DOMException(`timed out after ${this.timeoutMs} ms`, 'TimeoutError') });
    const transport = new StreamableHTTPClientTransport(new URL(server.url), {
      fetch: this.fetch,
      requestInit: { headers: server.headers },
      // The optional event stream is not re-opened when it ends: the session is short, and a
      // retry would outlive it.
      reconnectionOptions: { maxRetries: 0, initialReconnectionDelay: 0, maxReconnectionDelay: 0, reconnectionDelayGrowFactor: 1 },
    });
    const client = new Client(CLIENT_INFO);
    // Closing ends every request in flight, whatever state it is in: the bound holds even for a
    // server that accepted the connection and went silent.
    const close = () => void client.close().catch(() => undefined);
    bound.signal.addEventListener('abort', close, { once: true });
    try {
      if (bound.signal.aborted) throw new Error('aborted before the session began');
      const options: RequestOptions = { signal: bound.signal, timeout: this.timeoutMs };
      await client.connect(transport, options);
      return await work(client, options);
    } catch (error) {
      if (bound.expired) throw new McpServerError(`the MCP server did not answer within ${this.timeoutMs} ms`, { cause: error });
      if (signal?.aborted) throw new McpServerError('the call was cancelled', { cause: error });
      throw new McpServerError(describe(error), { cause: error });
    } finally {
      // Ends a session the server keeps (Mcp-Session-Id), as the specification asks of clients.
      if (transport.sessionId !== undefined && !bound.signal.aborted) await transport.terminateSession().catch(() => undefined);
      bound.signal.removeEventListener('abort', close);
      bound.dispose();
      await client.close().catch(() => undefined);
    }
  }
}

/** What went wrong, in words for whoever configured the server. */
function describe(error: unknown): string {
  const outbound = outboundCause(error);
  if (outbound) return outbound.reason === 'blocked' ? outbound.message : `could not reach the MCP server: ${outbound.message}`;
  if (error instanceof McpServerError) return error.message;
  if (error instanceof StreamableHTTPError) {
    // Its text holds the body of the answer, which may be a whole HTML page; the status says enough.
    return error.code !== undefined && error.code > 0 ? `the MCP server answered HTTP ${error.code}` : `the MCP server's answer is not MCP: ${snippet(error.message)}`;
  }
  if (error instanceof McpError) {
    if (error.code === Number(ErrorCode.RequestTimeout)) return 'the MCP server did not answer in time';
    return `the MCP server answered with an error: ${snippet(error.message)}`;
  }
  return `the MCP server's answer could not be used: ${snippet(error instanceof Error ? error.message : String(error))}`;
}

/** The guarded request's own error, however deep the SDK wrapped it. */
function outboundCause(error: unknown): OutboundRequestError | undefined {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth += 1) {
    if (current instanceof OutboundRequestError) return current;
  }
  return undefined;
}

function snippet(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length <= 300 ? line : `${line.slice(0, 299)}…`;
}
