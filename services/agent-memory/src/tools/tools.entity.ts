import { defineEntity, p } from '@mikro-orm/postgresql';

/** decisions §12: the kinds built so far; `mcp` joins with its discovery. */
export const TOOL_TYPES = ['http', 'workflow'] as const;
export type ToolType = (typeof TOOL_TYPES)[number];

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

export type ToolConfig = HttpToolConfig | WorkflowToolConfig;

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
    inputSchema: p.json<Record<string, unknown>>().columnType('jsonb'),
    requiresApproval: p.boolean(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});

export class Tool extends ToolSchema.class {}
ToolSchema.setClass(Tool);

/** The unique index on (tenant_id, name); its violation is a taken name (409). */
export const TOOLS_TENANT_NAME_KEY = 'tools_tenant_name_key';
