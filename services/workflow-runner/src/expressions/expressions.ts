import v8 from 'node:v8';
import { Environment, type ParseResult } from '@marcbachmann/cel-js';
import { celTypeName, fromCel, toCel } from './cel-values.js';
import { LRUCache } from 'lru-cache';
import { checkRegexps } from './regex-guard.js';

// cel-js runs `string.matches` on JavaScript's backtracking RegExp, where `(a+)+$` takes seconds
// on 30 characters. This flag makes V8 switch to its linear-time engine after excessive
// backtracking; it covers every pattern regex-guard lets through (no backreferences or
// lookaround), and it is process-wide, so setting it where expressions are compiled is enough.
v8.setFlagsFromString('--enable-experimental-regexp-engine-on-excessive-backtracks');

/** What an expression sees. Values are read, never changed: their CEL form is cached by identity. */
export interface ExpressionScope {
  /** The trigger payload, arbitrary JSON. */
  input: unknown;
  /** The outputs of finished nodes, by node id. */
  nodes: Record<string, { output: unknown }>;
  /** The inbound webhook request; empty objects for other triggers. */
  request: { query: Record<string, string | string[]>; headers: Record<string, string> };
}

/** An expression failed at run time; the message is meant for the execution's `error`. */
export class ExpressionError extends Error {
  override readonly name = 'ExpressionError';
}

export const MAX_EXPRESSION_LENGTH = 4_096; // characters

// Generous for any hand-written rule, small enough that parsing and checking stay cheap.
const LIMITS = { maxAstNodes: 1_000, maxDepth: 32, maxListElements: 256, maxMapEntries: 256, maxCallArguments: 16 };

function buildEnvironment(): Environment {
  const env = new Environment({ homogeneousAggregateLiterals: false, enableOptionalTypes: true, limits: LIMITS })
    .registerVariable('input', 'dyn', { description: 'the trigger payload' })
    .registerVariable('nodes', 'map<string, dyn>', { description: 'nodes.<id>.output of finished nodes' })
    .registerVariable('request', 'map<string, dyn>', { description: 'request.query and request.headers of a webhook' });
  // CEL keeps int and double apart (`1.5 * 2` has no overload); a JSON author does not expect that.
  const arithmetic = { '+': (a: number, b: number) => a + b, '-': (a: number, b: number) => a - b, '*': (a: number, b: number) => a * b, '/': (a: number, b: number) => a / b };
  for (const [op, apply] of Object.entries(arithmetic)) {
    env.registerOperator(`int ${op} double: double`, (a: bigint, b: number) => apply(Number(a), b));
    env.registerOperator(`double ${op} int: double`, (a: number, b: bigint) => apply(a, Number(b)));
  }
  // cel-js derives `double == int` and both `!=` from this one.
  env.registerOperator('int == double', (a: bigint, b: number) => Number(a) === b);
  return env;
}

const environment = buildEnvironment();

export interface CompiledExpression {
  readonly source: string;
  /** The value as JSON-friendly data (ints as numbers); throws ExpressionError. */
  evaluate(scope: ExpressionScope): unknown;
}

class CelExpression implements CompiledExpression {
  constructor(
    readonly source: string,
    private readonly program: ParseResult,
    /** The checked result type: `bool`, `int`, `dyn` (known only at run time)… */
    readonly type: string,
  ) {}

  evaluate(scope: ExpressionScope): unknown {
    return fromCel(this.evaluateCel(scope));
  }

  /** The raw CEL value (bigint ints, Optional…), for callers that look at its type. */
  evaluateCel(scope: ExpressionScope): unknown {
    let value: unknown;
    try {
      value = this.program(celContext(scope)) as unknown;
    } catch (error) {
      throw new ExpressionError(describe(error, false), { cause: error });
    }
    // An async function could make a Promise; none is registered, so this is a bug, not input.
    if (value instanceof Promise) throw new ExpressionError('evaluated asynchronously');
    return value;
  }
}

// Compiled by source text: the engine evaluates the same rule for every execution.
const cache = new LRUCache<string, CompiledExpression | string>({ max: 2_000 });

/** Parses and type-checks `source`; an error message (for a field error) when it is not valid. */
export function compileExpression(source: string): CompiledExpression | string {
  let compiled = cache.get(source);
  if (compiled === undefined) {
    compiled = compileUncached(source);
    if (source.length <= MAX_EXPRESSION_LENGTH) cache.set(source, compiled);
  }
  return compiled;
}

/** As compileExpression, and refused when the expression cannot yield a bool. */
export function compileCondition(source: string): CompiledExpression | string {
  const compiled = compileExpression(source);
  if (typeof compiled === 'string') return compiled;
  const type = compiled instanceof CelExpression ? compiled.type : 'dyn';
  return type === 'bool' || type === 'dyn' ? compiled : `must evaluate to a bool, not ${type}`;
}

/**
 * Evaluates a condition; throws ExpressionError when that fails or yields something other than
 * a bool. `label` opens the message, e.g. `rule 1: no such key: amount`.
 */
export function evaluateCondition(compiled: CompiledExpression, scope: ExpressionScope, label = 'condition'): boolean {
  let value: unknown;
  try {
    value = compiled instanceof CelExpression ? compiled.evaluateCel(scope) : compiled.evaluate(scope);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new ExpressionError(`${label}: ${message}`, { cause: error });
  }
  if (typeof value !== 'boolean') throw new ExpressionError(`${label} did not evaluate to a bool (got ${celTypeName(value)})`);
  return value;
}

function compileUncached(source: string): CompiledExpression | string {
  if (source.length > MAX_EXPRESSION_LENGTH) return `must be at most ${MAX_EXPRESSION_LENGTH} characters`;
  if (source.trim() === '') return 'must not be empty';
  let program: ParseResult;
  try {
    program = environment.parse(source);
  } catch (error) {
    return describe(error);
  }
  const checked = program.check();
  if (!checked.valid) return describe(checked.error);
  const regexProblem = checkRegexps(program.ast);
  if (regexProblem) return regexProblem;
  return new CelExpression(source, program, checked.type ?? 'dyn');
}

/** `No such key: amount` → `no such key: amount (at character 7)`, without the source excerpt. */
function describe(error: unknown, withPosition = true): string {
  if (!(error instanceof Error)) return String(error);
  const withSummary = error as Error & { summary?: unknown; range?: { start: number } };
  let text = typeof withSummary.summary === 'string' ? withSummary.summary : (error.message.split('\n')[0] ?? error.message);
  text = text.charAt(0).toLowerCase() + text.slice(1);
  if (text.startsWith('exceeded maxAstNodes')) text = `is too large (more than ${LIMITS.maxAstNodes} parts)`;
  else if (text.startsWith('exceeded maxDepth')) text = `nests too deeply (more than ${LIMITS.maxDepth} levels)`;
  return withPosition && withSummary.range ? `${text} (at character ${withSummary.range.start + 1})` : text;
}

// Converting a large payload on every evaluation would dominate; inputs and outputs do not change.
const converted = new WeakMap<object, unknown>();

function celOf(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return toCel(value);
  let cel = converted.get(value);
  if (cel === undefined) {
    cel = toCel(value);
    converted.set(value, cel);
  }
  return cel;
}

function celContext(scope: ExpressionScope): Record<string, unknown> {
  const nodes = Object.create(null) as Record<string, unknown>;
  for (const [id, node] of Object.entries(scope.nodes)) {
    const entry = Object.create(null) as Record<string, unknown>;
    entry.output = celOf(node.output);
    nodes[id] = entry;
  }
  return { input: celOf(scope.input), nodes, request: celOf(scope.request) };
}
