import { DomainError, type FieldErrors } from '@agent-platform/kit';
import type { SecretBox } from '@agent-platform/kit/security';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { McpServerError, type DiscoveredTool, type McpServerAddress } from '../mcp-client.js';
import { checkHeaders, checkUrl } from '../tool-input.js';
import { maskHeaders, openHeaders, sealHeadersOf } from '../tool-secrets.js';
import type { OfferedTool, StoredTool, ToolCallRequest, ToolCallServices, ToolCalls, ToolKind, ToolOutcome, ToolSaveServices } from './tool-kind.js';

/** As stored: header values sealed as an http tool's. */
export interface McpToolConfig {
  url: string;
  headers: Record<string, string>;
  /** The server's tools offered to the model; null offers every one. */
  allowed_tools: string[] | null;
}

// What OpenAI-compatible providers accept as a function's name.
const FUNCTION_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
// How many of the server's names a refusal lists, so the message stays readable.
const NAMES_SHOWN = 20;
// What the MCP transport sets itself on every request; a configured value would break the session.
const MCP_TRANSPORT_HEADERS = new Set(['mcp-session-id', 'mcp-protocol-version', 'last-event-id']);
// The MCP specification's bound on a tool name, and a model's on the tools of one request.
const MCP_TOOL_NAME_MAX = 128;
const ALLOWED_TOOLS_MAX = 128;

/**
 * `mcp` tools (decisions §12.5): a server's tools, listed at save (and on refresh) and offered to
 * the model each under `<tool>__<remote>`; a call is one session with the server.
 */
export const mcpTool: ToolKind<McpToolConfig> = {
  label: 'MCP server',
  summary: "the tools an MCP server (Streamable HTTP) lists, each offered as `<tool>__<name>` with the server's own schema",
  configHelp: '{url: the server\'s Streamable HTTP endpoint, headers?: {name: value} (answered masked), allowed_tools?: [names of the server\'s tools], default every one}',
  fields: [
    { key: 'url', label: 'Server URL', input: 'url', hint: "The MCP server's Streamable HTTP endpoint; its tools are listed when you save." },
    { key: 'allowed_tools', label: 'Allowed tools', input: 'lines', hint: "The server's tools the model is offered, one name a line; empty: every tool." },
    { key: 'headers', label: 'Headers', input: 'headers' },
  ],
  configKeys: ['url', 'headers', 'allowed_tools'],
  schemas: 'discovered',
  platformAction: undefined,
  async check(config, save) {
    const url = await checkUrl(config, save.services.policy, save.errors);
    const headers = checkHeaders(config, save.errors);
    for (const name of Object.keys(headers)) {
      if (MCP_TRANSPORT_HEADERS.has(name.toLowerCase())) save.errors.add(`config.headers.${name}`, 'is set by the MCP transport itself');
    }
    return { url: url ?? '', headers: sealHeadersOf(headers, save), allowed_tools: readAllowedTools(config.allowed_tools, save.errors) };
  },
  async confirm(config, save) {
    const discovered = await listTools(save.toolId, config, save.services, 'config.url');
    checkAllowedTools(save.name, config.allowed_tools, discovered, save.errors);
    return discovered;
  },
  discover: (tool, services) => listTools(tool.id, tool.config, services),
  visible: (config) => ({ ...config, headers: maskHeaders(config.headers) }),
  offered: offeredMcpTools,
  calls: mcpCalls,
};

/**
 * What the server lists, every page. At save (`field` given), a server that cannot be asked is a
 * mistake in the tool, named on that field; on a refresh it is the server's failure.
 */
async function listTools(toolId: string, config: McpToolConfig, services: ToolSaveServices, field?: string): Promise<DiscoveredTool[]> {
  try {
    return await services.mcp.listTools(serverOf(toolId, config, services.secrets));
  } catch (error) {
    if (!(error instanceof McpServerError)) throw error;
    if (field !== undefined) throw DomainError.validation([{ field, message: `could not list the MCP server's tools: ${error.message}` }]);
    throw new DomainError('upstream_error', `The MCP server's tools could not be listed: ${error.message}.`, { cause: error });
  }
}

function serverOf(toolId: string, config: McpToolConfig, secrets: SecretBox): McpServerAddress {
  return { url: config.url, headers: openHeaders(toolId, config.headers, secrets) };
}

/** allowed_tools as sent: folded, in the order given; null offers every tool of the server. */
function readAllowedTools(value: unknown, errors: FieldErrors): string[] | null {
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

/** The name a model calls a server's tool by (decisions §12): `<tool name>__<mcp tool name>`. */
export function mcpFunctionName(toolName: string, remoteName: string): string {
  return `${toolName}__${remoteName}`;
}

/** Whether a model can be offered the server's tool at all: its combined name must be a function name. */
export function isOfferable(toolName: string, remoteName: string): boolean {
  return FUNCTION_NAME.test(mcpFunctionName(toolName, remoteName));
}

/**
 * What a model is offered of an mcp tool: each discovered tool that allowed_tools lets through
 * (all when it is null) and whose combined name is a function name; the others are left out
 * rather than renamed, since a renamed tool could collide with another or mislead the model.
 */
export function offeredMcpTools<Tool extends StoredTool<McpToolConfig>>(tool: Tool): OfferedTool<Tool>[] {
  const { allowed_tools: allowed } = tool.config;
  const allowedSet = allowed === null ? undefined : new Set(allowed);
  return (tool.discovered ?? [])
    .filter((remote) => (allowedSet === undefined || allowedSet.has(remote.name)) && isOfferable(tool.name, remote.name))
    .map((remote) => ({
      name: mcpFunctionName(tool.name, remote.name),
      description: remote.description ?? tool.description ?? '',
      parameters: remote.input_schema,
      tool,
      remoteName: remote.name,
    }));
}

/**
 * At save: every name of allowed_tools must be a tool the server listed, and one a model can be
 * offered, or the tool would silently offer less than it says.
 */
function checkAllowedTools(toolName: string, allowed: readonly string[] | null, discovered: readonly DiscoveredTool[], errors: FieldErrors): void {
  if (allowed === null) return;
  const listed = new Set(discovered.map((remote) => remote.name));
  allowed.forEach((name, index) => {
    if (!listed.has(name)) {
      const names = [...listed].slice(0, NAMES_SHOWN).join(', ') + (listed.size > NAMES_SHOWN ? ', …' : '');
      errors.add(`config.allowed_tools[${index}]`, listed.size === 0 ? 'is not a tool of the MCP server, which lists none' : `is not a tool of the MCP server; it lists: ${names}`);
    } else if (!isOfferable(toolName, name)) {
      errors.add(`config.allowed_tools[${index}]`, `cannot be offered to a model: "${mcpFunctionName(toolName, name)}" does not match ${FUNCTION_NAME.source}`);
    }
  });
}

/**
 * One session with the tool's server per call, within the call's signal. A tool that reports an
 * error, or a server that fails, is a failed outcome, never a rejection.
 */
/** The handler of mcp tools' calls, given what they reach. */
export function mcpCalls(services: McpCallServices): ToolCalls {
  return { call: (request) => callMcp(request, services) };
}

type McpCallServices = Pick<ToolCallServices, 'mcp' | 'secrets'>;

async function callMcp(request: ToolCallRequest, services: McpCallServices): Promise<ToolOutcome> {
  const tool = request.tool as StoredTool<McpToolConfig>;
  const { remoteName } = request;
  // Only what the tool offers is run, whatever name the model came up with.
  if (remoteName === undefined || !offeredMcpTools(tool).some((offered) => offered.remoteName === remoteName)) {
    return { status: 'failed', error: `${tool.name} offers no tool named ${remoteName ?? '(none)'}` };
  }
  try {
    const result = await services.mcp.callTool(serverOf(tool.id, tool.config, services.secrets), remoteName, request.arguments, request.signal);
    if (result.isError === true) return { status: 'failed', error: textOf(result.content) || 'the tool reported an error' };
    return { status: 'completed', result: resultOf(result) };
  } catch (error) {
    if (error instanceof McpServerError) return { status: 'failed', error: error.message };
    throw error;
  }
}

/** The structured result when the tool gives one; else its text; else its content parts as they are. */
function resultOf(result: CallToolResult): unknown {
  if (result.structuredContent !== undefined) return result.structuredContent;
  if (result.content.every((part) => part.type === 'text')) return textOf(result.content);
  return result.content;
}

function textOf(content: CallToolResult['content']): string {
  return content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('\n');
}
