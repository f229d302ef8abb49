import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { expect } from 'vitest';
import type { ErrorBody, Harness } from './harness.js';

/** The MCP endpoint of the harness's gateway, in the versioned API like every route. */
export function mcpUrl(h: Harness, query: Record<string, string> = {}): URL {
  const url = new URL('/api/v1/mcp', h.url);
  for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value);
  return url;
}

/**
 * An MCP client of the SDK, connected (initialize, then notifications/initialized) over a real
 * socket with `credential` as the Bearer; `query` picks the tenant (`tenant_id`). Close it after.
 */
export async function connectMcp(h: Harness, credential: string, query: Record<string, string> = {}): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(mcpUrl(h, query), { requestInit: { headers: { authorization: `Bearer ${credential}` } } });
  const client = new Client({ name: 'gateway-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

/** The result of a tools/call as the platform answers it: its JSON as text and as structured content. */
export interface ToolResult<Body> {
  isError: boolean;
  text: string;
  body: Body;
}

export async function callTool<Body = Record<string, unknown>>(client: Client, name: string, args: Record<string, unknown> = {}): Promise<ToolResult<Body>> {
  const result = await client.callTool({ name, arguments: args });
  const [first] = result.content as { type: string; text?: string }[];
  expect(first?.type).toBe('text');
  return { isError: result.isError === true, text: first?.text ?? '', body: result.structuredContent as Body };
}

/** A successful call's body; its text is the same JSON. */
export async function toolOk<Body = Record<string, unknown>>(client: Client, name: string, args: Record<string, unknown> = {}): Promise<Body> {
  const result = await callTool<Body>(client, name, args);
  expect(result.isError, result.text).toBe(false);
  expect(JSON.parse(result.text)).toEqual(result.body);
  return result.body;
}

/** Asserts a tool error carrying decisions §2's body with `code` (and exactly `fields`, when given). */
export async function toolError(client: Client, name: string, args: Record<string, unknown>, code: string, fields?: string[]): Promise<ErrorBody> {
  const result = await callTool<ErrorBody>(client, name, args);
  expect(result.isError, result.text).toBe(true);
  expect(JSON.parse(result.text)).toEqual(result.body);
  expect(result.body.error).toBe(code);
  expect(typeof result.body.message).toBe('string');
  if (fields) expect(result.body.details?.map((detail) => detail.field).sort()).toEqual([...fields].sort());
  return result.body;
}

/** A raw JSON-RPC POST to the endpoint, as any HTTP client would send it (no SDK). */
export function postMcp(h: Harness, credential: string | undefined, message: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(mcpUrl(h), {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(credential === undefined ? {} : { authorization: `Bearer ${credential}` }),
      ...headers,
    },
    body: JSON.stringify(message),
  });
}
