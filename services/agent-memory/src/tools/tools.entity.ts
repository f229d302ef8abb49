import { defineEntity, p } from '@mikro-orm/postgresql';
import { TOOL_TYPES, type ToolConfig } from './kinds/tool-kinds.js';
import type { DiscoveredTool } from './mcp-client.js';

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
