import type { FieldErrors } from '@agent-platform/kit';
import { checkTemplates, compileTemplate, hasPlaceholder, keyPath } from '../expressions/template.js';

/** A node's own time-out at most: the execution's, 5 min. */
export const MAX_TIMEOUT_MS = 300_000;
/** decisions §13: how long an approval or a wait may hold an execution, 30 days. */
export const MAX_WAIT_SECONDS = 2_592_000;

/** Where a node's config is read and what it may refer to. */
export interface ConfigContext {
  /** `nodes[3].config` */
  path: string;
  nodeId: string;
  /** Ids of the graph's nodes (the first of any duplicates). */
  nodeIds: ReadonlySet<string>;
  /** Ids of trigger nodes, which nothing may lead to. */
  triggerIds: ReadonlySet<string>;
  errors: FieldErrors;
}

export type JsonObject = Record<string, unknown>;

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function fieldPath(ctx: ConfigContext, key: string): string {
  return keyPath(ctx.path, key);
}

/** Refuses every key not in `allowed`, by name. */
export function onlyKeys(config: JsonObject, allowed: readonly string[], ctx: ConfigContext, what: string): void {
  for (const key of Object.keys(config)) {
    if (!allowed.includes(key)) ctx.errors.add(fieldPath(ctx, key), `is not a key of ${what}; allowed: ${allowed.join(', ')}`);
  }
}

interface StringRule {
  max: number;
  /** Placeholders allowed: the string is checked as a template. */
  template?: boolean;
  /** No line breaks (header values, subjects). */
  line?: boolean;
}

/** A string at `config[key]`; `null` counts as absent. Adds an error and returns undefined if bad. */
export function readString(config: JsonObject, key: string, ctx: ConfigContext, rule: StringRule & { required: boolean }): string | undefined {
  const value = config[key];
  const path = fieldPath(ctx, key);
  if (value === undefined || value === null) {
    if (rule.required) ctx.errors.add(path, 'is required');
    return undefined;
  }
  return checkString(value, path, ctx.errors, rule);
}

/** `value` as a string obeying `rule`, or undefined after adding an error at `path`. */
export function checkString(value: unknown, path: string, errors: FieldErrors, rule: StringRule): string | undefined {
  if (typeof value !== 'string') {
    errors.add(path, 'must be a string');
    return undefined;
  }
  if (value.length > rule.max) {
    errors.add(path, `must be at most ${rule.max} characters`);
    return undefined;
  }
  if (rule.line && /[\r\n]/.test(value)) {
    errors.add(path, 'must not contain line breaks');
    return undefined;
  }
  if (rule.template) {
    const template = compileTemplate(value);
    if (typeof template === 'string') {
      errors.add(path, template);
      return undefined;
    }
  }
  return value;
}

/** `timeout_ms`: an integer of milliseconds, 1 to the execution time-out. */
export function readTimeout(config: JsonObject, ctx: ConfigContext): number | undefined {
  const value = config.timeout_ms;
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_TIMEOUT_MS) {
    ctx.errors.add(fieldPath(ctx, 'timeout_ms'), `must be an integer from 1 to ${MAX_TIMEOUT_MS} (milliseconds)`);
    return undefined;
  }
  return value;
}

/** A URL that is a template; when it has no placeholder it must already be an http(s) URL. */
export function readUrl(config: JsonObject, key: string, ctx: ConfigContext): string | undefined {
  const url = readString(config, key, ctx, { required: true, max: 2_048, template: true, line: true });
  if (url === undefined || hasPlaceholder(url)) return url;
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') || parsed.hostname === '') {
    ctx.errors.add(fieldPath(ctx, key), 'must be an absolute http or https URL');
    return undefined;
  }
  return url;
}

/** Any JSON value whose strings are templates, each checked where it sits. */
export function readTemplatedValue(config: JsonObject, key: string, ctx: ConfigContext): unknown {
  const value = config[key];
  if (value !== undefined) checkTemplates(value, fieldPath(ctx, key), ctx.errors);
  return value;
}

/** A node id another node points to: existing, not the node itself, not a trigger. */
export function checkTarget(value: unknown, path: string, ctx: ConfigContext): string | undefined {
  if (typeof value !== 'string') {
    ctx.errors.add(path, 'must be a node id');
    return undefined;
  }
  if (!ctx.nodeIds.has(value)) {
    ctx.errors.add(path, `must be the id of a node of this workflow; there is no node ${JSON.stringify(value)}`);
    return undefined;
  }
  if (value === ctx.nodeId) {
    ctx.errors.add(path, 'must not be the node itself');
    return undefined;
  }
  if (ctx.triggerIds.has(value)) {
    ctx.errors.add(path, `must not lead to the trigger node ${JSON.stringify(value)}`);
    return undefined;
  }
  return value;
}

/** Whole seconds, 1 to 30 days; undefined when absent or wrong (the problem is reported). */
export function readSeconds(config: JsonObject, key: string, ctx: ConfigContext): number | undefined {
  const value = config[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_WAIT_SECONDS) {
    ctx.errors.add(fieldPath(ctx, key), `must be an integer from 1 to ${MAX_WAIT_SECONDS} (seconds, 30 days)`);
    return undefined;
  }
  return value;
}
