import type { FastifyInstance } from 'fastify';
import { as } from './harness.js';

/** A tool as the REST API answers it. */
export interface ToolBody {
  id: string;
  name: string;
  description: string | null;
  type: 'http' | 'workflow' | 'mcp';
  config: Record<string, unknown>;
  input_schema: Record<string, unknown> | null;
  /** mcp tools only. */
  discovered?: { name: string; description: string | null; input_schema: Record<string, unknown> }[];
  requires_approval: boolean;
  created_at: string;
  updated_at: string;
}

export const ARGUMENTS_SCHEMA = { type: 'object', properties: { order_id: { type: 'string' } }, required: ['order_id'] };

/** An http tool's body; `fields` override the defaults. The URL is loopback: the harness allows private addresses where it is used. */
export function httpTool(fields: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: 'lookup_order',
    description: 'Finds an order by its number.',
    type: 'http',
    config: { url: 'http://127.0.0.1:9/orders', headers: { authorization: 'Bearer sk-live-123' } },
    input_schema: ARGUMENTS_SCHEMA,
    ...fields,
  };
}

/** Creates a tool of the caller's tenant through the gateway. */
export function newTool(app: FastifyInstance, credential: string, fields: Record<string, unknown> = {}): Promise<ToolBody> {
  return createTool(app, credential, httpTool(fields));
}

/** Creates an mcp tool of the caller's tenant for the server at `url`: the server must answer. */
export function newMcpTool(app: FastifyInstance, credential: string, url: string, fields: Record<string, unknown> = {}): Promise<ToolBody> {
  return createTool(app, credential, mcpTool(url, fields));
}

async function createTool(app: FastifyInstance, credential: string, payload: Record<string, unknown>): Promise<ToolBody> {
  const created = await as(app, credential, { method: 'POST', url: '/api/v1/tools', payload });
  if (created.statusCode !== 201) throw new Error(`tool: ${created.statusCode} ${created.body}`);
  return created.json<ToolBody>();
}

/** An mcp tool's body for the server at `url`; `fields` override the defaults. */
export function mcpTool(url: string, fields: Record<string, unknown> = {}): Record<string, unknown> {
  return { name: 'tracker', description: 'The issue tracker.', type: 'mcp', config: { url, headers: { authorization: 'Bearer mcp-secret-42' } }, ...fields };
}
