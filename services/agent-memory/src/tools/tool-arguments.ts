import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { TOOL_KINDS } from './kinds/tool-kinds.js';
import type { Tool } from './tools.entity.js';

/** Compiled schemas kept (one per tool, about 7 KB each); the least recently used goes first. */
const CACHE_MAX = 1_000;
/** A model's arguments can be large; the message it gets back about them need not be. */
const MESSAGE_MAX = 1_000;

interface Compiled {
  /** The tool's `updatedAt`: a replaced tool has a new schema, compiled afresh. */
  version: number;
  /** A validator, or why the schema did not compile. */
  validate: ValidateFunction | string;
}

/**
 * Checks a model's arguments against a tool's `input_schema` (draft 2020-12, as checked at save)
 * before the tool is called: a call the schema refuses would fail at the far end anyway, or worse,
 * do something with arguments nobody described. Each tool version is compiled once.
 */
export class ArgumentValidator {
  private readonly compiled = new Map<string, Compiled>();

  /**
   * Why the arguments do not fit the schema, or undefined when they do. An mcp tool's calls are
   * checked against the schema its server gave for `remoteName`.
   */
  check(tool: Pick<Tool, 'id' | 'updatedAt' | 'type' | 'inputSchema' | 'discovered'>, remoteName: string | undefined, args: unknown): string | undefined {
    if (typeof args !== 'object' || args === null || Array.isArray(args)) return 'arguments must be a JSON object';
    const { validate } = this.validatorOf(tool, remoteName);
    if (typeof validate === 'string') return validate;
    if (validate(args)) return undefined;
    // As Ajv's errorsText words them: `arguments/order_id must be string`.
    const message = (validate.errors ?? []).map((error) => `arguments${error.instancePath} ${error.message ?? 'is invalid'}`).join(', ');
    return `arguments do not match the input schema: ${message.length > MESSAGE_MAX ? `${message.slice(0, MESSAGE_MAX)}…` : message}`;
  }

  private validatorOf(tool: Pick<Tool, 'id' | 'updatedAt' | 'type' | 'inputSchema' | 'discovered'>, remoteName: string | undefined): Compiled {
    const version = tool.updatedAt.getTime();
    const key = remoteName === undefined ? tool.id : `${tool.id}/${remoteName}`;
    const cached = this.compiled.get(key);
    // A Map keeps insertion order: deleting and setting again makes the entry the newest.
    this.compiled.delete(key);
    const entry = cached?.version === version ? cached : { version, validate: compile(schemaOf(tool, remoteName)) };
    this.compiled.set(key, entry);
    if (this.compiled.size > CACHE_MAX) this.compiled.delete(this.compiled.keys().next().value!);
    return entry;
  }
}

/** The schema a call's arguments must fit: the tool's own, or its server's for that tool. */
function schemaOf(tool: Pick<Tool, 'type' | 'inputSchema' | 'discovered'>, remoteName: string | undefined): Record<string, unknown> {
  if (TOOL_KINDS[tool.type].schemas === 'own') return tool.inputSchema ?? {};
  return tool.discovered?.find((discovered) => discovered.name === remoteName)?.input_schema ?? {};
}

/**
 * A fresh Ajv per schema, as at save (tool-input.ts), so one tool's `$id` never collides with
 * another's. The schema itself was validated at save, so it is not validated again here (that
 * compiles the meta-schema each time, ten times the cost). Strict mode off: unknown keywords are
 * annotations. All errors: the model fixes every mistake in one round rather than one per round.
 */
function compile(schema: Record<string, unknown>): ValidateFunction | string {
  try {
    return new Ajv2020({ strict: false, logger: false, allErrors: true, validateSchema: false }).compile(schema);
  } catch (error) {
    return `the tool's input schema does not compile: ${error instanceof Error ? error.message : String(error)}`;
  }
}
