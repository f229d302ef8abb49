import { defineEntity, p } from '@mikro-orm/postgresql';

/** decisions §12. */
export const TOOL_TYPES = ['http', 'workflow', 'mcp'] as const;
export type ToolType = (typeof TOOL_TYPES)[number];

export function isToolType(value: string): value is ToolType {
  return (TOOL_TYPES as readonly string[]).includes(value);
}

export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

/** As stored: header values sealed by SecretBox (associated data `<tool id>:<header name>`). */
export interface HttpToolConfig {
  url: string;
  method: HttpMethod;
  headers: Record<string, string>;
}

export interface WorkflowToolConfig {
  workflow_id: string;
}

/** As stored: header values sealed as an http tool's. */
export interface McpToolConfig {
  url: string;
  headers: Record<string, string>;
  /** The server's tools offered to the model; null offers every one. */
  allowed_tools: string[] | null;
}

export type ToolConfig = HttpToolConfig | WorkflowToolConfig | McpToolConfig;

/** One tool an MCP server listed (`tools/list`), as stored and answered. */
export interface DiscoveredTool {
  name: string;
  description: string | null;
  input_schema: Record<string, unknown>;
}

export const ToolSchema = defineEntity({
  name: 'Tool',
  tableName: 'tools',
  properties: {
    id: p.string().primary(),
    tenantId: p.string(),
    /** ^[a-z][a-z0-9_]{0,63}$, unique in the tenant (tools_tenant_name_key): what the model calls it by. */
    name: p.text(),
    description: p.text().strictNullable(),
    type: p.enum(TOOL_TYPES),
    config: p.json<ToolConfig>().columnType('jsonb'),
    /** The arguments' JSON Schema; null for mcp tools, whose server gives one per tool. */
    inputSchema: p.json<Record<string, unknown>>().columnType('jsonb').strictNullable(),
    /** mcp tools only: what the server listed at the last save or refresh. */
    discovered: p.json<DiscoveredTool[]>().columnType('jsonb').strictNullable(),
    requiresApproval: p.boolean(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});

export class Tool extends ToolSchema.class {}
ToolSchema.setClass(Tool);

/** The unique index on (tenant_id, name); its violation is a taken name (409). */
export const TOOLS_TENANT_NAME_KEY = 'tools_tenant_name_key';
