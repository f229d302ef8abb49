import type { FieldErrors } from '@agent-platform/kit';
import { agentTool, type AgentToolConfig } from './agent.js';
import { httpTool, type HttpToolConfig } from './http.js';
import { mcpTool, type McpToolConfig } from './mcp.js';
import type { ToolKind } from './tool-kind.js';
import { workflowTool, type WorkflowToolConfig } from './workflow.js';

/** Each tool type's config, by type: the one list a new type joins. */
export interface ToolConfigs {
  http: HttpToolConfig;
  workflow: WorkflowToolConfig;
  mcp: McpToolConfig;
  agent: AgentToolConfig;
}

export type ToolType = keyof ToolConfigs;
export type ToolConfig = ToolConfigs[ToolType];

/**
 * Every tool type of decisions §12, in the order people read them. A new type is a module beside
 * these, its config above and a line here; the compiler holds this table to ToolConfigs.
 */
export const TOOL_KINDS: { readonly [T in ToolType]: ToolKind<ToolConfigs[T]> } = {
  http: httpTool,
  workflow: workflowTool,
  mcp: mcpTool,
  agent: agentTool,
};

export const TOOL_TYPES = Object.keys(TOOL_KINDS) as ToolType[];

export function isToolType(value: string): value is ToolType {
  return Object.hasOwn(TOOL_KINDS, value);
}

/**
 * The kind of a stored tool. Its config is the type's: the tool was checked by this kind when it
 * was saved, and the table's check constraints hold the pair together.
 */
export function toolKindOf(type: ToolType): ToolKind<ToolConfig> {
  return TOOL_KINDS[type] as ToolKind<ToolConfig>;
}

export function checkType(type: string, errors: FieldErrors): ToolType | undefined {
  if (isToolType(type)) return type;
  errors.add('type', `must be one of ${TOOL_TYPES.join(', ')}`);
  return undefined;
}

/** Keys outside the type's list are refused by name, as an agent's config keys are. */
export function checkConfigKeys(type: ToolType, config: Record<string, unknown>, errors: FieldErrors): void {
  const allowed = TOOL_KINDS[type].configKeys;
  for (const key of Object.keys(config)) {
    if (!allowed.includes(key)) errors.add(`config.${key}`, `is not a config key of a ${type} tool; allowed: ${allowed.join(', ')}`);
  }
}
