import { Ajv2020 } from 'ajv/dist/2020.js';
import type { FieldErrors } from '@agent-platform/kit';
import type { OutboundPolicy } from '@agent-platform/kit/security';
import { HTTP_METHODS, isToolType, TOOL_TYPES, type HttpMethod, type ToolType } from './tools.entity.js';

// decisions §12
const NAME_PATTERN = /^[a-z][a-z0-9_]{0,63}$/;
const DESCRIPTION_MAX = 1_024;
// RFC 9110 token: what a header name may be.
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}$/;
const HEADER_VALUE_MAX = 8_192;
const HEADERS_MAX = 50;
/** What a header value reads as in every answer; sent back on PUT, it keeps the stored value. */
export const MASKED = '***';
// What the MCP transport sets itself on every request; a configured value would break the session.
const MCP_TRANSPORT_HEADERS = new Set(['mcp-session-id', 'mcp-protocol-version', 'last-event-id']);
// The MCP specification's bound on a tool name, and a model's on the tools of one request.
const MCP_TOOL_NAME_MAX = 128;
const ALLOWED_TOOLS_MAX = 128;

export const CONFIG_KEYS: Record<ToolType, readonly string[]> = {
  http: ['url', 'method', 'headers'],
  workflow: ['workflow_id'],
  mcp: ['url', 'headers', 'allowed_tools'],
};

export function checkName(name: string, errors: FieldErrors): string {
  if (!NAME_PATTERN.test(name)) errors.add('name', 'must match ^[a-z][a-z0-9_]{0,63}$: a lower-case letter, then up to 63 of a-z, 0-9 and _');
  return name;
}

export function checkDescription(description: string | undefined, errors: FieldErrors): string | null {
  if (description === undefined) return null;
  if (description.length > DESCRIPTION_MAX) errors.add('description', `must be at most ${DESCRIPTION_MAX} characters`);
  return description;
}

export function checkType(type: string, errors: FieldErrors): ToolType | undefined {
  if (isToolType(type)) return type;
  errors.add('type', `must be one of ${TOOL_TYPES.join(', ')}`);
  return undefined;
}

/** A JSON object from JSON text, or a problem named on `field`. */
export function parseObject(json: string | undefined, field: string, errors: FieldErrors): Record<string, unknown> | undefined {
  if (json === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    errors.add(field, 'must be a JSON object');
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    errors.add(field, 'must be an object');
    return undefined;
  }
  return value as Record<string, unknown>;
}

/**
 * A JSON Schema object that compiles as draft 2020-12: a schema the platform cannot compile could
 * not check a model's arguments later. A fresh Ajv each time, so a schema's `$id` never collides
 * with another tool's and nothing accumulates. Strict mode is off: keywords Ajv does not know
 * (`example`, `x-…`) are annotations, not mistakes.
 */
export function checkInputSchema(json: string | undefined, errors: FieldErrors): Record<string, unknown> {
  if (json === undefined) {
    errors.add('input_schema', 'is required: a JSON Schema object describing the arguments');
    return {};
  }
  const schema = parseObject(json, 'input_schema', errors);
  if (schema === undefined) return {};
  try {
    new Ajv2020({ strict: false, logger: false, allErrors: false }).compile(schema);
  } catch (error) {
    errors.add('input_schema', `is not a valid JSON Schema (draft 2020-12): ${(error as Error).message}`);
  }
  return schema;
}

/** decisions §12.5: an mcp tool takes no schema of its own; each of the server's tools has one. */
export function refuseInputSchema(json: string | undefined, errors: FieldErrors): null {
  if (json !== undefined) errors.add('input_schema', "is not taken by an mcp tool: the server gives each of its tools' schema (see discovered)");
  return null;
}

/** Keys outside the type's list are refused by name, as an agent's config keys are. */
export function checkConfigKeys(type: ToolType, config: Record<string, unknown>, errors: FieldErrors): void {
  for (const key of Object.keys(config)) {
    if (!CONFIG_KEYS[type].includes(key)) errors.add(`config.${key}`, `is not a config key of a ${type} tool; allowed: ${CONFIG_KEYS[type].join(', ')}`);
  }
}

export interface HttpConfigInput {
  url: string | undefined;
  method: HttpMethod;
  /** Plain values, or MASKED for "keep what is stored". */
  headers: Record<string, string>;
}

/** url, method and headers of an http tool. */
export async function checkHttpConfig(config: Record<string, unknown>, policy: OutboundPolicy, errors: FieldErrors): Promise<HttpConfigInput> {
  const url = await checkUrl(config, policy, errors);
  let method: HttpMethod = 'POST';
  if (config.method !== undefined && config.method !== null) {
    if (typeof config.method === 'string' && (HTTP_METHODS as readonly string[]).includes(config.method.toUpperCase())) method = config.method.toUpperCase() as HttpMethod;
    else errors.add('config.method', `must be one of ${HTTP_METHODS.join(', ')}`);
  }
  return { url, method, headers: checkHeaders(config, errors) };
}

export interface McpConfigInput {
  url: string | undefined;
  /** Plain values, or MASKED for "keep what is stored". */
  headers: Record<string, string>;
  /** Folded, in the order given; null offers every tool of the server. */
  allowedTools: string[] | null;
}

/** url, headers and allowed_tools of an mcp tool; the server is asked about them afterwards. */
export async function checkMcpConfig(config: Record<string, unknown>, policy: OutboundPolicy, errors: FieldErrors): Promise<McpConfigInput> {
  const url = await checkUrl(config, policy, errors);
  const headers = checkHeaders(config, errors);
  for (const name of Object.keys(headers)) {
    if (MCP_TRANSPORT_HEADERS.has(name.toLowerCase())) errors.add(`config.headers.${name}`, 'is set by the MCP transport itself');
  }
  return { url, headers, allowedTools: checkAllowedTools(config.allowed_tools, errors) };
}

/** The address the tool reaches, through the outbound address policy (decisions §8.3), as a webhook's. */
async function checkUrl(config: Record<string, unknown>, policy: OutboundPolicy, errors: FieldErrors): Promise<string | undefined> {
  if (typeof config.url !== 'string' || config.url.trim() === '') {
    errors.add('config.url', 'is required: the address the tool calls');
    return undefined;
  }
  const problem = await policy.checkUrl(config.url.trim());
  if (problem === undefined) return config.url.trim();
  errors.add('config.url', problem);
  return undefined;
}

function checkHeaders(config: Record<string, unknown>, errors: FieldErrors): Record<string, string> {
  if (config.headers === undefined || config.headers === null) return {};
  if (typeof config.headers !== 'object' || Array.isArray(config.headers)) {
    errors.add('config.headers', 'must be an object of header names to string values');
    return {};
  }
  const headers: [string, string][] = [];
  const entries = Object.entries(config.headers as Record<string, unknown>);
  if (entries.length > HEADERS_MAX) errors.add('config.headers', `must hold at most ${HEADERS_MAX} headers`);
  for (const [name, value] of entries) {
    if (!HEADER_NAME.test(name)) errors.add(`config.headers.${name}`, 'is not a valid header name');
    else if (typeof value !== 'string' || value.length > HEADER_VALUE_MAX || /[\r\n\0]/.test(value)) {
      errors.add(`config.headers.${name}`, `must be a string of at most ${HEADER_VALUE_MAX} characters without line breaks`);
    } else headers.push([name, value]);
  }
  // Entries, not assignments: a header named __proto__ stays a header.
  return Object.fromEntries(headers);
}

function checkAllowedTools(value: unknown, errors: FieldErrors): string[] | null {
  if (value === undefined || value === null) return null;
  if (!Array.isArray(value)) {
    errors.add('config.allowed_tools', "must be a list of the server's tool names");
    return null;
  }
  if (value.length === 0) errors.add('config.allowed_tools', 'must name at least one tool; leave it out to offer every tool of the server');
  if (value.length > ALLOWED_TOOLS_MAX) errors.add('config.allowed_tools', `must name at most ${ALLOWED_TOOLS_MAX} tools`);
  value.forEach((name, index) => {
    if (typeof name !== 'string' || name === '' || name.length > MCP_TOOL_NAME_MAX) errors.add(`config.allowed_tools[${index}]`, `must be a tool name of 1 to ${MCP_TOOL_NAME_MAX} characters`);
  });
  return [...new Set(value.filter((name): name is string => typeof name === 'string'))];
}

export function checkWorkflowId(config: Record<string, unknown>, errors: FieldErrors): string | undefined {
  if (typeof config.workflow_id === 'string' && config.workflow_id !== '') return config.workflow_id;
  errors.add('config.workflow_id', 'is required: the id of a workflow of this tenant');
  return undefined;
}
