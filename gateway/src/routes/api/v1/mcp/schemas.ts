import { z } from 'zod';
import { ErrorSchema } from '../../../../http/schemas.js';

// The MCP endpoint's messages are JSON-RPC 2.0, read and answered by the MCP SDK's transport; these
// schemas document them. The body is documented, not checked here: a body that is no JSON-RPC
// message gets the transport's own JSON-RPC error, as every MCP client expects.

const JsonRpcId = z.union([z.string(), z.int()]).describe('Chosen by the client; the response carries it back. Absent in a notification.');

/** Any JSON (the transport parses it); documented as the JSON-RPC message it must be. */
export const McpMessageBody = z.unknown().meta({
  description: 'One JSON-RPC 2.0 request or notification of the Model Context Protocol (batches are refused).',
  type: 'object',
  required: ['jsonrpc', 'method'],
  properties: {
    jsonrpc: { const: '2.0' },
    id: { type: ['string', 'integer'], description: JsonRpcId.description },
    method: { type: 'string', description: 'initialize, notifications/initialized, ping, tools/list, tools/call, …' },
    params: { type: 'object', description: 'The method\'s parameters; tools/call: {name, arguments}.' },
  },
  examples: [
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'search_memory', arguments: { agent_id: 'agt_01JD0F3G4H5J6K7M8N9P0QRSTV', query: 'refund policy', top_k: 3 } } },
  ],
});

export const McpResponseSchema = z
  .object({
    jsonrpc: z.literal('2.0'),
    id: JsonRpcId,
    result: z
      .record(z.string(), z.unknown())
      .optional()
      .describe('tools/call: {content: [{type: "text", text}], structuredContent, isError?}. A tool that failed has isError true and structuredContent the Error object (its error code and message, details naming the arguments at fault).'),
    error: z.object({ code: z.int(), message: z.string(), data: z.unknown().optional() }).optional().describe('A protocol error (an unknown method or tool, invalid params).'),
  })
  .meta({ id: 'McpResponse', description: 'The JSON-RPC 2.0 response to the request sent.' });

export const JsonRpcErrorSchema = z
  .object({
    jsonrpc: z.literal('2.0'),
    error: z.object({ code: z.int().describe('-32000 for a refusal of the transport, -32600 invalid request, -32700 parse error.'), message: z.string() }),
    id: z.null(),
  })
  .meta({ id: 'McpTransportError', description: 'A JSON-RPC error of the MCP transport, answering no particular request.' });

/** A 400 is the REST API's (malformed JSON) or the transport's (no JSON-RPC message, a batch, an unsupported protocol version). */
export const McpBadRequest = z
  .union([ErrorSchema, JsonRpcErrorSchema])
  .describe('`invalid_request` (Error) for malformed JSON or an unreadable URL; a JSON-RPC error for a body that is no JSON-RPC message, a batch, or an unsupported MCP-Protocol-Version.');
