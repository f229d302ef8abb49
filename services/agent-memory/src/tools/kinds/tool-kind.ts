import type { AccessRule, Actor, ErrorCode, FieldErrors } from '@agent-platform/kit';
import type { OutboundHttp, OutboundPolicy, SecretBox } from '@agent-platform/kit/security';
import type { PromiseClient } from '@agent-platform/kit/grpc';
import type { ExecutionServiceService } from '@agent-platform/proto/workflows/v1';
import type { DiscoveredTool, McpClient, McpDiscovery } from '../mcp-client.js';
import type { WorkflowDirectory } from '../workflow-directory.js';

export type { DiscoveredTool } from '../mcp-client.js';

/**
 * What one tool type is, in one module (kinds/<type>.ts): its config, how a save checks it, what
 * the model is offered, how a call runs, what it does on the platform, and how it is described
 * to people. The service, the runner and the generated docs (`pnpm kinds`) read tool types only
 * through TOOL_KINDS.
 */
export interface ToolKind<Config> {
  /** The console's name for it: "HTTP endpoint". */
  label: string;
  /** One line for the README and the OpenAPI document: what a call does. */
  summary: string;
  /** Its config for the OpenAPI document: keys, defaults and bounds. */
  configHelp: string;
  /** The console's form for its config, in order. */
  fields: readonly ConfigField[];
  /** Keys its config takes; others are refused by name. */
  configKeys: readonly string[];
  /**
   * Where a call's argument schema comes from: the tool's own `input_schema`, or the server it
   * reaches, one per tool the server lists (then the tool takes no `input_schema`).
   */
  schemas: 'own' | 'discovered';
  /**
   * decisions §12: what a tool of this type does on the platform, as the REST route doing the
   * same, with that route's rule; a call, a save and an agent naming it all need the rule.
   * Undefined: it reaches outside the platform only.
   */
  platformAction: PlatformAction | undefined;
  /** Every problem of the config at once; `save.stored` is the tool as it was, on a PUT. */
  check(config: Record<string, unknown>, save: ToolSave): Promise<Config>;
  /**
   * After the rest of the tool is sound: what must be asked elsewhere (the workflow exists; what
   * the server lists, which is stored as `discovered`). Refusals go to `save.errors`.
   */
  confirm?(config: Config, save: ToolSave): Promise<DiscoveredTool[] | null>;
  /** The tools its server lists now, for a refresh; absent for types that discover nothing. */
  discover?(tool: StoredTool<Config>, services: ToolSaveServices): Promise<DiscoveredTool[]>;
  /** The config as every answer shows it: secrets masked. */
  visible(config: Config): Config;
  /** What the model is offered of a tool of this type. */
  offered<Tool extends StoredTool<Config>>(tool: Tool): OfferedTool<Tool>[];
  /** The handler that runs its calls, given what calls reach. */
  calls(services: ToolCallServices): ToolCalls;
}

/** The REST route doing what a tool does on the platform, and that route's rule (kit's ACCESS). */
export interface PlatformAction {
  /** The gateway's route table key (`METHOD /path`); the security suites check its row is `rule`. */
  route: string;
  rule: AccessRule;
}

/** One control of the console's tool form; `key` is the config key it sets. */
export type ConfigField =
  | { key: string; label: string; input: 'url'; hint: string }
  | { key: string; label: string; input: 'choice'; choices: readonly string[]; default: string }
  /** One value a line: an array, or null when empty. */
  | { key: string; label: string; input: 'lines'; hint: string }
  /** Header names and values, shown masked once saved. */
  | { key: string; label: string; input: 'headers' }
  /** A workflow of the tenant, by id. */
  | { key: string; label: string; input: 'workflow' }
  /** An agent of the tenant, by id. */
  | { key: string; label: string; input: 'agent' };

/** A tool as the kinds read it: the entity without its persistence. */
export interface StoredTool<Config = unknown> {
  id: string;
  tenantId: string;
  name: string;
  description: string | null;
  type: string;
  config: Config;
  inputSchema: Record<string, unknown> | null;
  discovered: DiscoveredTool[] | null;
  updatedAt: Date;
}

/** What a save of a tool reaches beyond its own fields. */
export interface ToolSaveServices {
  /** The SSRF guard of decisions §8.3, as webhook endpoints have it. */
  policy: OutboundPolicy;
  /** Seals header values at rest (TOOL_SECRET_KEY). */
  secrets: SecretBox;
  workflows: WorkflowDirectory;
  /** Whether an agent is the tenant's. */
  agents: { exists(actor: Actor, agentId: string): Promise<boolean> };
  /** Asks an MCP server for its tools. */
  mcp: McpDiscovery;
}

export interface ToolSave {
  actor: Actor;
  /** The tool's id, new or kept: header values are sealed to it. */
  toolId: string;
  name: string;
  /** The tool as stored, on a replace. */
  stored: StoredTool | undefined;
  errors: FieldErrors;
  services: ToolSaveServices;
}

/** What calls of tools reach. */
export interface ToolCallServices {
  /** Behind the SSRF guard of decisions §8.3: the policy's, with ALLOW_PRIVATE_NETWORK_URLS. */
  http: OutboundHttp;
  /** Opens the tools' sealed header values for a call only. */
  secrets: SecretBox;
  /** Called at the first call: workflow-runner may start after this service (see workflow-directory.ts). */
  executions: () => PromiseClient<typeof ExecutionServiceService>;
  mcp: McpClient;
  /** Turns of the tenant's agents, for `agent` tools; bound after the chat turn is built, which uses the tools. */
  agentTurns: () => AgentTurns;
  /** TOOL_TIMEOUT_MS: the bound on a call whose caller names no deadline. */
  timeoutMs: number;
}

/** decisions §16: a turn of another agent, started by an agent's tool call. */
export interface AgentTurns {
  /**
   * The agent's answer to `message` in a session of its own, its run a child of the caller's.
   * Rejects with a DomainError it can word for the model (nesting too deep, an agent calling itself).
   */
  turn(request: {
    actor: Actor;
    agentId: string;
    message: string;
    caller: ToolCaller;
    signal: AbortSignal;
    requestId: string | undefined;
  }): Promise<{ content: string; runId: string; sessionId: string }>;
}

/** The turn whose model asked for a call: its agent and its run. */
export interface ToolCaller {
  agentId: string;
  runId: string;
}

/**
 * What a model is offered of a tool (decisions §12): a function's name, description and JSON
 * Schema parameters. An `mcp` tool offers one per discovered tool, named `<tool>__<remote>`.
 */
export interface OfferedTool<Tool extends StoredTool = StoredTool> {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  /** The tool that runs the call. */
  tool: Tool;
  /** For tools whose server lists several, the server's own name of the tool; else undefined. */
  remoteName: string | undefined;
}

/** A tool offered as itself, under its own name and schema. */
export function offeredItself<Tool extends StoredTool>(tool: Tool): OfferedTool<Tool> {
  return { name: tool.name, description: tool.description ?? '', parameters: tool.inputSchema ?? { type: 'object' }, tool, remoteName: undefined };
}

/** One call of a tool, as the chat turn asks a kind to run it. */
export interface ToolCallRequest {
  actor: Actor;
  tool: StoredTool;
  remoteName: string | undefined;
  /** The model's arguments, already parsed as a JSON object. */
  arguments: Record<string, unknown>;
  /** The turn that asked for the call; undefined outside one (a test's direct call). */
  caller?: ToolCaller | undefined;
  /** Aborted at TOOL_TIMEOUT_MS, or when the turn is cancelled: the call must stop then. */
  signal: AbortSignal;
  requestId: string | undefined;
  /**
   * When `signal` fires for the time-out, ms since the epoch (ToolRunner sets it): a kind that
   * must bound a wait of its own (a workflow's) sizes it to the time left. Undefined: not known.
   */
  deadlineAt?: number;
}

/** Why the platform refused a call for its credential (decisions §12), as §2 codes it. */
export type RefusalCode = Extract<ErrorCode, 'forbidden' | 'unauthorized'>;

/**
 * What the model is given back: the result, or an error text in its place; `code` when the
 * platform refused the call for the turn's credential.
 */
export type ToolOutcome = ({ status: 'completed'; result: unknown } | { status: 'failed'; error: string; code?: RefusalCode }) & {
  /** An `agent` tool's: the run of the turn it began (decisions §16). */
  runId?: string;
};

/**
 * Runs calls of one tool type. Failures it can name (an HTTP status, a failed execution) are
 * failed outcomes; it may reject on anything else, and the runner turns that into a failed outcome.
 */
export interface ToolCalls {
  call(request: ToolCallRequest): Promise<ToolOutcome>;
}
