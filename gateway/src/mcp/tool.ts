import type { OutgoingCall } from '@agent-platform/kit/grpc';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { RoutePolicy } from '../auth/policy.js';
import { parseForPeople, requestError } from '../http/validation.js';

/** What a tool runs with: the gateway (its upstream clients and config) and the caller's call options. */
export interface ToolContext {
  app: FastifyInstance;
  /** callAs(request): the principal and request id every upstream call carries, as REST's do. */
  call: OutgoingCall;
}

export type JsonObject = Record<string, unknown>;

/** One row of the tool table, as written: its arguments typed by its zod object. */
export interface ToolSpec<Input extends z.ZodObject> {
  /** What the model calls it by (decisions §12 names them). */
  name: string;
  title: string;
  /** Shown to the model: what the tool does, what it answers, what it costs. */
  description: string;
  /** The arguments; each field's description is what the model reads about it. */
  input: Input;
  /**
   * The REST route's row of the policy table (src/auth/policy.ts) whose role and API-key scope the
   * tool needs: the row itself, not a copy, so the tool and its route cannot drift apart.
   */
  policy: RoutePolicy;
  /** Reads only (MCP's readOnlyHint), so a client may call it without asking its user. */
  readOnly: boolean;
  /** The tool's work; throws DomainErrors as REST handlers do. Answers the REST route's body. */
  run(args: z.output<Input>, context: ToolContext): Promise<JsonObject>;
}

/** A row of the tool table with its type parameter erased, so rows of different inputs share one list. */
export interface McpTool {
  name: string;
  policy: RoutePolicy;
  /** The tool as tools/list answers it (the input as JSON Schema, computed once). */
  definition: Tool;
  /** Checks the arguments (validation_error naming each field at fault), then runs the tool. */
  call(args: unknown, context: ToolContext): Promise<JsonObject>;
}

export function defineTool<Input extends z.ZodObject>(spec: ToolSpec<Input>): McpTool {
  const definition: Tool = {
    name: spec.name,
    title: spec.title,
    description: spec.description,
    // The dialect of the current MCP specification (and of the platform's own tools, decisions
    // §12.1); stated in the schema's $schema. Optional fields with defaults are not required.
    inputSchema: z.toJSONSchema(spec.input, { target: 'draft-2020-12', io: 'input' }) as Tool['inputSchema'],
    annotations: { title: spec.title, readOnlyHint: spec.readOnly, ...(spec.readOnly ? {} : { destructiveHint: false }) },
  };
  return {
    name: spec.name,
    policy: spec.policy,
    definition,
    call: (args, context) => spec.run(parseArguments(spec.input, args), context),
  };
}

/** The arguments as the tool reads them; absent arguments are an empty object, as MCP allows. */
function parseArguments<Input extends z.ZodObject>(input: Input, args: unknown): z.output<Input> {
  const parsed = parseForPeople(input, args ?? {});
  if (parsed.success) return parsed.data;
  // As a REST body that was read but breaks a rule: 422 validation_error naming each field.
  throw requestError(parsed.error.issues, undefined);
}
