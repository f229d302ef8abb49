import type { Actor } from '@agent-platform/kit';
import type { SecretBox } from '@agent-platform/kit/security';
import type { HttpToolConfig, Tool } from './tools.entity.js';
import { sealedFor } from './tool-secrets.js';

/**
 * What a model is offered of a tool (decisions §12): a function's name, description and JSON
 * Schema parameters. An `mcp` tool offers one per discovered tool, named `<tool>__<remote>`.
 */
export interface OfferedTool {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  /** The tool that runs the call. */
  tool: Tool;
  /** For `mcp` tools, the server's own name of the tool; undefined for the other kinds. */
  remoteName: string | undefined;
}

/** One call of a tool, as the chat turn asks a kind to run it. */
export interface ToolCallRequest {
  actor: Actor;
  tool: Tool;
  remoteName: string | undefined;
  /** The model's arguments, already parsed as a JSON object. */
  arguments: Record<string, unknown>;
  /** Aborted at TOOL_TIMEOUT_MS, or when the turn is cancelled: the call must stop then. */
  signal: AbortSignal;
  requestId: string | undefined;
}

/** What the model is given back: the result, or an error text in its place. */
export type ToolOutcome = { status: 'completed'; result: unknown } | { status: 'failed'; error: string };

/** Runs calls of one tool type. May reject: the caller turns any rejection into a failed outcome. */
export interface ToolKind {
  call(request: ToolCallRequest): Promise<ToolOutcome>;
}

/** A tool's header values, unsealed for one outbound request. */
export function openHeaders(tool: Pick<Tool, 'id'>, headers: HttpToolConfig['headers'], secrets: SecretBox): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, sealed]) => [name, secrets.open(sealed, sealedFor(tool.id, name))]));
}
