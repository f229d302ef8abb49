import type { Tool } from '@agent-platform/proto/agents/v1/tools';
import { z } from 'zod';
import { TOOL_KINDS, TOOL_TYPES } from '../../../../generated/kinds.js';
import { iso, pathId, Timestamp } from '../../../../http/schemas.js';

// The gateway checks shapes and types. What a name, a URL, a workflow id or a JSON Schema may be
// (the name pattern, the outbound address policy, the tenant's workflows, draft 2020-12) is the
// agent-memory service's to decide; its validation_error comes back naming each offending field.

/** decisions §12; the types are agent-memory's (services/agent-memory/src/tools/kinds). */
const ToolTypeInput = z.enum(TOOL_TYPES).describe(TOOL_KINDS.map((kind) => `${kind.type}: ${kind.summary}`).join('; '));
/** A component in answers, so clients read the catalogue from the document. */
const ToolType = ToolTypeInput.meta({ id: 'ToolType' });

/** The tool types whose arguments follow their own input_schema, or their server's schemas. */
export const typesWhose = (schemas: 'own' | 'discovered') => TOOL_KINDS.filter((kind) => kind.schemas === schemas).map((kind) => kind.type);

/** Tools whose answers list what their server discovered. */
const DISCOVERING_TYPES: ReadonlySet<string> = new Set(typesWhose('discovered'));

const Name = z.string().describe('What the model calls the tool by: ^[a-z][a-z0-9_]{0,63}$, unique in the tenant (a taken name is 409).');

const Description = z.string().describe('Shown to the model: what the tool does and when to use it. Up to 1,024 characters.');

/**
 * Unknown keys are kept, not stripped, so the service can refuse them by name (422 naming
 * `config.<key>`).
 */
const ConfigInput = z
  .looseObject({
    url: z
      .string()
      .optional()
      .describe("http: the address called; mcp: the MCP server's Streamable HTTP endpoint. https on a public address (the SSRF guard of webhooks applies)."),
    method: z.string().optional().describe('http: GET, POST, PUT, PATCH or DELETE. Default POST.'),
    headers: z
      .record(z.string(), z.string())
      .optional()
      .describe('http, mcp: sent with every request. Values are secrets: stored sealed and answered as "***"; on PUT, "***" keeps the stored value of that header.'),
    workflow_id: z.string().optional().describe('workflow: a workflow of the tenant (wf_…), checked at save.'),
    agent_id: z.string().optional().describe('agent: another agent of the tenant (agt_…), whose turn a call is; checked at save.'),
    allowed_tools: z
      .array(z.string())
      .nullable()
      .optional()
      .describe("mcp: the server's tools the model is offered, by their names on the server; each must be one it lists (422 naming config.allowed_tools[i]). Absent or null: every tool."),
  })
  .describe(`Per type: ${TOOL_KINDS.map((kind) => `${kind.type} ${kind.config}`).join('; ')}. Any other key is 422.`)
  // Documented as closed, which the API is: the service refuses other keys (the gateway lets them through to it).
  .meta({ additionalProperties: false });

const InputSchema = z
  .record(z.string(), z.unknown())
  .describe(
    `The JSON Schema (draft 2020-12) of the arguments, as the model is told them. Required for ${typesWhose('own').join(' and ')} (one that does not compile is 422 naming input_schema); ${typesWhose('discovered')
      .map((type) => `an ${type} tool`)
      .join(', ')} takes none (null): its server gives each tool's own.`,
  );

const DiscoveredToolSchema = z
  .object({
    name: z.string().describe("The tool's name on the MCP server; the model calls it <tool name>__<name>."),
    description: z.string().nullable().describe('As the server gives it, cut at 1,024 characters.'),
    input_schema: z.record(z.string(), z.unknown()).describe('The JSON Schema of its arguments, as the server gives it.'),
  })
  .meta({ id: 'DiscoveredTool', description: 'One tool an MCP server lists (tools/list).' });

export const ToolParams = z.object({ tool_id: pathId('tool', 'tool') });

const TOOL_EXAMPLE = {
  name: 'lookup_order',
  description: 'Finds an order by its number and returns its status.',
  type: 'http',
  config: { url: 'https://api.acme.test/orders/lookup', method: 'POST', headers: { authorization: 'Bearer sk-…' } },
  input_schema: { type: 'object', properties: { order_id: { type: 'string' } }, required: ['order_id'] },
  requires_approval: false,
};

const MCP_TOOL_EXAMPLE = {
  name: 'tracker',
  description: 'The issue tracker of the support team.',
  type: 'mcp',
  config: { url: 'https://mcp.tracker.test/mcp', headers: { authorization: 'Bearer tk-…' }, allowed_tools: ['search_issues', 'create_issue'] },
};

export const CreateToolBody = z
  .object({
    name: Name,
    description: Description.optional(),
    type: ToolTypeInput,
    config: ConfigInput,
    input_schema: InputSchema.nullable().optional(),
    requires_approval: z.boolean().optional().describe('Calls wait for a person to approve them. Default false.'),
  })
  .meta({ examples: [TOOL_EXAMPLE, MCP_TOOL_EXAMPLE] });

/** PUT: the whole tool; description and requires_approval left out are reset. */
export const ReplaceToolBody = CreateToolBody.meta({
  examples: [{ ...TOOL_EXAMPLE, description: 'Finds an order and its shipping status.', config: { ...TOOL_EXAMPLE.config, headers: { authorization: '***' } } }],
});

export const ToolSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    type: ToolType,
    config: z.record(z.string(), z.unknown()).describe('As sent, method filled in for http and allowed_tools (null: all) for mcp; header values read "***".'),
    input_schema: z.record(z.string(), z.unknown()).nullable().describe('null for an mcp tool: each discovered tool has its own.'),
    discovered: z
      .array(DiscoveredToolSchema)
      .optional()
      .describe(
        'mcp tools only: what the server listed at the last save or refresh. The model is offered those allowed_tools lets through whose <tool name>__<name> fits ^[a-zA-Z0-9_-]{1,64}$.',
      ),
    requires_approval: z.boolean(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'Tool', description: 'Something an agent can call: an HTTP endpoint, a workflow or the tools of an MCP server (decisions §12).' });

/** The REST tool of a gRPC answer; its absence is an upstream defect (500). */
export function toolBody(tool: Tool | undefined): z.output<typeof ToolSchema> {
  if (!tool) throw new Error('agent-memory answered without the tool.');
  return {
    id: tool.id,
    name: tool.name,
    description: tool.description ?? null,
    type: tool.type as z.output<typeof ToolType>,
    config: JSON.parse(tool.configJson) as Record<string, unknown>,
    input_schema: JSON.parse(tool.inputSchemaJson) as Record<string, unknown> | null,
    ...(DISCOVERING_TYPES.has(tool.type)
      ? {
          discovered: tool.discovered.map((remote) => ({
            name: remote.name,
            description: remote.description ?? null,
            input_schema: JSON.parse(remote.inputSchemaJson) as Record<string, unknown>,
          })),
        }
      : {}),
    requires_approval: tool.requiresApproval,
    created_at: iso(tool.createdAt),
    updated_at: iso(tool.updatedAt),
  };
}

/** The gRPC fields of a create or replace: objects as JSON text, unknown keys included. */
export function toolFields(body: z.output<typeof CreateToolBody>) {
  return {
    name: body.name,
    description: body.description,
    type: body.type,
    configJson: JSON.stringify(body.config),
    // null is "none", as absent: what an mcp tool reads back as.
    inputSchemaJson: body.input_schema == null ? undefined : JSON.stringify(body.input_schema),
    requiresApproval: body.requires_approval,
  };
}
