import type { FastifyInstance } from 'fastify';
import { as } from './harness.js';

/** A tool as the REST API answers it. */
export interface ToolBody {
  id: string;
  name: string;
  description: string | null;
  type: 'http' | 'workflow';
  config: Record<string, unknown>;
  input_schema: Record<string, unknown>;
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
export async function newTool(app: FastifyInstance, credential: string, fields: Record<string, unknown> = {}): Promise<ToolBody> {
  const created = await as(app, credential, { method: 'POST', url: '/api/v1/tools', payload: httpTool(fields) });
  if (created.statusCode !== 201) throw new Error(`tool: ${created.statusCode} ${created.body}`);
  return created.json<ToolBody>();
}
