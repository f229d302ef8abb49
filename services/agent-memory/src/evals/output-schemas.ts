import { characters } from '@agent-platform/kit';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import { LRUCache } from 'lru-cache';
import { beyondBudget, compilePattern } from './patterns.js';

/**
 * The schemas of `json_schema` scorers (draft 2020-12, as tools' input schemas): written by a
 * tenant, checked against a model's output. Ajv trusts its schemas as it trusts code, so two of
 * its keywords are made safe for untrusted ones (see Ajv's "Security considerations"): `pattern`
 * and `patternProperties` match with RE2 (patterns.ts), and `uniqueItems` compares items by a
 * canonical JSON text in one pass instead of deep-comparing every pair (two seconds for an array
 * of 9,000 small objects).
 */

/** A schema as JSON text is at most this long: as long as a chat message. */
export const SCHEMA_MAX_CHARACTERS = 32_000;
/** Compiled schemas kept; an eval scores each of its items with the same few. */
const CACHE_MAX = 100;
const REASON_ERRORS_MAX = 5;

interface OutputSchema {
  validate: ValidateFunction;
  /** Instructions of all the schema's patterns together: what matching the output may cost per character. */
  patternProgram: number;
}

const compiled = new LRUCache<string, OutputSchema>({ max: CACHE_MAX });

/** Why the schema cannot check outputs, or undefined when it can (it compiles, its patterns are RE2's). */
export function schemaProblem(schema: Record<string, unknown>): string | undefined {
  let text: string;
  try {
    text = JSON.stringify(schema);
  } catch {
    return 'must be a JSON object';
  }
  if (text.length > SCHEMA_MAX_CHARACTERS) return `must be at most ${characters(SCHEMA_MAX_CHARACTERS)} characters as JSON`;
  try {
    compile(schema, true);
  } catch (error) {
    return `is not a valid JSON Schema (draft 2020-12): ${error instanceof Error ? error.message : String(error)}`;
  }
  return undefined;
}

/** Whether `output` is one JSON document valid against the schema, and why not when it is not. */
export function checkOutput(schema: Record<string, unknown>, output: string): { passed: true } | { passed: false; reason: string } {
  let document: unknown;
  try {
    document = JSON.parse(output);
  } catch (error) {
    return { passed: false, reason: `The output is not one JSON document: ${error instanceof Error ? error.message : String(error)}.` };
  }
  let schemaOfOutput: OutputSchema;
  try {
    schemaOfOutput = outputSchema(schema);
  } catch (error) {
    // Checked when the eval was created; reached only if the schema changed its meaning since (an Ajv upgrade).
    return { passed: false, reason: `The schema does not compile: ${error instanceof Error ? error.message : String(error)}.` };
  }
  const { validate, patternProgram } = schemaOfOutput;
  const tooLong = beyondBudget(patternProgram, output, "the schema's patterns");
  if (tooLong !== undefined) return { passed: false, reason: tooLong };
  try {
    if (validate(document)) return { passed: true };
  } catch (error) {
    // A document nested deeper than the stack, for one.
    return { passed: false, reason: `The output could not be checked against the schema: ${error instanceof Error ? error.message : String(error)}.` };
  }
  const errors = validate.errors ?? [];
  // As Ajv's errorsText words them: `/order/id must be string`.
  const listed = errors.slice(0, REASON_ERRORS_MAX).map((error) => `${error.instancePath || '/'} ${error.message ?? 'is invalid'}`);
  const more = errors.length > REASON_ERRORS_MAX ? ` (and ${errors.length - REASON_ERRORS_MAX} more)` : '';
  return { passed: false, reason: `The output does not match the schema: ${listed.join('; ')}${more}.` };
}

function outputSchema(schema: Record<string, unknown>): OutputSchema {
  const key = JSON.stringify(schema);
  const cached = compiled.get(key);
  if (cached !== undefined) return cached;
  // Validated against the meta-schema when the eval was created: not again (ten times the cost).
  const entry = compile(schema, false);
  compiled.set(key, entry);
  return entry;
}

/**
 * A fresh Ajv per schema, so one schema's `$id` never collides with another's. Strict mode off:
 * unknown keywords are annotations, as for tools. All errors: the reason lists what is wrong at once.
 */
function compile(schema: Record<string, unknown>, validateSchema: boolean): OutputSchema {
  let patternProgram = 0;
  const linearPattern = (source: string): { test: (text: string) => boolean } => {
    const pattern = compilePattern(source);
    if (typeof pattern === 'string') throw new Error(`the pattern ${JSON.stringify(source)} ${pattern}`);
    patternProgram += pattern.programSize();
    return pattern;
  };
  // Ajv writes `code` into standalone validation code, which is never generated here.
  const regExp = Object.assign(linearPattern, { code: 're2js' });
  const ajv = new Ajv2020({ strict: false, logger: false, allErrors: true, validateSchema, code: { regExp } });
  ajv.removeKeyword('uniqueItems');
  ajv.addKeyword({ keyword: 'uniqueItems', type: 'array', schemaType: 'boolean', validate: uniqueItems, errors: true });
  const validate = ajv.compile(schema);
  return { validate, patternProgram };
}

interface KeywordCheck {
  (schemaValue: boolean, data: unknown[]): boolean;
  /** Ajv reads the failure from here, and adds where in the document it is. */
  errors?: Partial<ErrorObject>[];
}

/** `uniqueItems`, in one pass over the items. */
const uniqueItems: KeywordCheck = (unique, items) => {
  uniqueItems.errors = [];
  if (!unique) return true;
  const seen = new Map<string, number>();
  for (const [index, item] of items.entries()) {
    const text = JSON.stringify(canonical(item));
    const first = seen.get(text);
    if (first !== undefined) {
      uniqueItems.errors = [{ keyword: 'uniqueItems', message: `must not have duplicate items (items ${first} and ${index} are equal)`, params: { i: index, j: first } }];
      return false;
    }
    seen.set(text, index);
  }
  return true;
};

/** The value with every object's keys in one order: equal JSON values get equal texts. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (typeof value !== 'object' || value === null) return value;
  const record = value as Record<string, unknown>;
  // Entries, not assignments: a key named __proto__ stays a key.
  return Object.fromEntries(Object.keys(record).sort().map((key) => [key, canonical(record[key])]));
}
