import type { FieldErrors } from '@agent-platform/kit';
import type { SecretBox } from '@agent-platform/kit/security';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { McpServerError, type McpClient } from './mcp-client.js';
import { openHeaders, type OfferedTool, type ToolCallRequest, type ToolKind, type ToolOutcome } from './tool-runner.js';
import type { DiscoveredTool, McpToolConfig, Tool } from './tools.entity.js';

// What OpenAI-compatible providers accept as a function's name.
const FUNCTION_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
// How many of the server's names a refusal lists, so the message stays readable.
const NAMES_SHOWN = 20;

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
export function offeredMcpTools(tool: Tool): OfferedTool[] {
  const { allowed_tools: allowed } = tool.config as McpToolConfig;
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
export function checkAllowedTools(toolName: string, allowed: readonly string[] | null, discovered: readonly DiscoveredTool[], errors: FieldErrors): void {
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

export interface McpToolKindOptions {
  client: McpClient;
  /** Opens the tool's header values for the call only. */
  secrets: SecretBox;
}

/**
 * Runs calls of mcp tools: one session with the tool's server per call, within the call's signal.
 * A tool that reports an error, or a server that fails, is a failed outcome, never a rejection.
 */
export class McpToolKind implements ToolKind {
  private readonly options: McpToolKindOptions;

  constructor(options: McpToolKindOptions) {
    this.options = options;
  }

  async call(request: ToolCallRequest): Promise<ToolOutcome> {
    const { tool, remoteName } = request;
    // Only what the tool offers is run, whatever name the model came up with.
    if (remoteName === undefined || !offeredMcpTools(tool).some((offered) => offered.remoteName === remoteName)) {
      return { status: 'failed', error: `${tool.name} offers no tool named ${remoteName ?? '(none)'}` };
    }
    const config = tool.config as McpToolConfig;
    try {
      const server = { url: config.url, headers: openHeaders(tool, config.headers, this.options.secrets) };
      const result = await this.options.client.callTool(server, remoteName, request.arguments, request.signal);
      if (result.isError === true) return { status: 'failed', error: textOf(result.content) || 'the tool reported an error' };
      return { status: 'completed', result: resultOf(result) };
    } catch (error) {
      if (error instanceof McpServerError) return { status: 'failed', error: error.message };
      throw error;
    }
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
