import { characters, DATASET_EXPECTED_MAX, type FieldErrors } from '@agent-platform/kit';
import { z } from 'zod';
import { judgeScore } from './judge.js';
import { checkOutput, schemaProblem } from './output-schemas.js';
import { beyondBudget, compilePattern } from './patterns.js';
import { bounded, failedScore, passedScore, SCORER_TYPES, type Sample, type Score, type ScoreDeps } from './scores.js';

export { SCORER_TYPES, type Sample, type Score, type ScoreDeps, type ScorerType } from './scores.js';

/**
 * An eval's scorers (decisions §16): what each accepts, which need a dataset item's `expected`,
 * and how each scores one item's output. Pure of any database: the eval runner calls `score` once
 * per item and scorer, with the item and what its run answered.
 */

export const SCORERS_MAX = 10;
export const SCORER_NAME_MAX = 64;
export const PATTERN_MAX = 1_000;
export const RUBRIC_MAX = 4_000;

const name = z
  .string()
  .max(SCORER_NAME_MAX)
  .refine((text) => text.trim() !== '', 'must not be blank')
  .optional();

/** A text to compare with, as long as an item's `expected` may be. */
const compared = z
  .string()
  .max(DATASET_EXPECTED_MAX)
  .refine((text) => text.trim() !== '', 'must not be blank');

const pattern = z
  .string()
  .min(1)
  .max(PATTERN_MAX)
  .superRefine((source, context) => {
    // Zod runs this after a refused length too: one fault named, and no long pattern compiled.
    if (source.length > PATTERN_MAX) return;
    const compiled = compilePattern(source);
    if (typeof compiled === 'string') context.addIssue({ code: 'custom', message: compiled });
  });

// A JSON object kept as it came (z.record would copy it, and lose a `__proto__` key on the way).
const jsonSchema = z
  .custom<Record<string, unknown>>((value) => typeof value === 'object' && value !== null && !Array.isArray(value), {
    error: (issue) => (issue.input === undefined ? 'is required' : 'must be a JSON Schema object'),
  })
  .superRefine((schema, context) => {
    const problem = schemaProblem(schema);
    if (problem !== undefined) context.addIssue({ code: 'custom', message: problem });
  });

// Strict objects: a misspelt option (`casesensitive`) is refused, not silently ignored.
const textScorer = <Type extends 'contains' | 'exact'>(type: Type) =>
  z.strictObject({ type: z.literal(type), value: compared.optional(), case_sensitive: z.boolean().default(false), name });

const scorerSpec = z.discriminatedUnion('type', [
  textScorer('contains'),
  textScorer('exact'),
  z.strictObject({ type: z.literal('regex'), value: pattern.optional(), name }),
  z.strictObject({ type: z.literal('json_schema'), schema: jsonSchema, name }),
  z.strictObject({
    type: z.literal('llm_judge'),
    rubric: z
      .string()
      .max(RUBRIC_MAX)
      .refine((text) => text.trim() !== '', 'must not be blank'),
    threshold: z.number().min(0).max(1).default(0.5),
    name,
  }),
]);

const scorerSpecs = z
  .array(scorerSpec)
  .min(1, `must hold 1 to ${SCORERS_MAX} scorers`)
  .max(SCORERS_MAX, `must hold 1 to ${SCORERS_MAX} scorers`)
  .transform((specs) => specs.map((spec) => ({ ...spec, name: spec.name ?? spec.type })));

/** A scorer as the eval keeps it: defaults filled in, `name` always set. */
export type ScorerSpec = z.output<typeof scorerSpecs>[number];
export type ContainsSpec = Extract<ScorerSpec, { type: 'contains' }>;
export type ExactSpec = Extract<ScorerSpec, { type: 'exact' }>;
export type RegexSpec = Extract<ScorerSpec, { type: 'regex' }>;
export type JsonSchemaSpec = Extract<ScorerSpec, { type: 'json_schema' }>;
export type LlmJudgeSpec = Extract<ScorerSpec, { type: 'llm_judge' }>;

const TYPE_NAMES: Record<string, string> = { string: 'text', number: 'a number', boolean: 'true or false', object: 'an object', array: 'a list' };

/** Zod's refusals in the services' own voice ("must not be empty"), as the gateway words its own. */
const inOurWords: z.core.$ZodErrorMap = (issue) => {
  switch (issue.code) {
    case 'invalid_type':
      return issue.input === undefined ? 'is required' : `must be ${TYPE_NAMES[issue.expected] ?? issue.expected}`;
    case 'too_small':
      if (issue.origin === 'string') return Number(issue.minimum) === 1 ? 'must not be empty' : `must be at least ${characters(Number(issue.minimum))} characters`;
      return `must be at least ${Number(issue.minimum)}`;
    case 'too_big':
      if (issue.origin === 'string') return `must be at most ${characters(Number(issue.maximum))} characters`;
      return `must be at most ${Number(issue.maximum)}`;
    case 'unrecognized_keys':
      return `has keys it does not take: ${issue.keys.join(', ')}`;
    case 'invalid_union':
      // The one union here is the scorer's type.
      return `must be one of ${SCORER_TYPES.map((type) => JSON.stringify(type)).join(', ')}`;
    default:
      return undefined;
  }
};

/**
 * An eval's scorers as sent (parsed JSON), every fault named at once as the caller sent it:
 * `scorers[1].value`, `scorers[2].name`. A pattern or a schema that cannot be used is refused
 * here, not found out item after item.
 */
export function checkScorers(value: unknown, errors: FieldErrors, field = 'scorers'): ScorerSpec[] {
  const parsed = scorerSpecs.safeParse(value, { error: inOurWords });
  if (!parsed.success) for (const issue of parsed.error.issues) errors.add(fieldPath(field, issue.path), issue.message);
  // Read from what was sent, so a duplicate is named with the other faults, not after they are fixed.
  const first = new Map<string, number>();
  namesSent(value).forEach((name, index) => {
    if (name === undefined) return;
    const taken = first.get(name);
    if (taken === undefined) first.set(name, index);
    else errors.add(fieldPath(field, [index, 'name']), `must be unique within the eval: ${fieldPath(field, [taken])} is also named ${JSON.stringify(name)} (a name defaults to the type)`);
  });
  return parsed.success ? parsed.data : [];
}

/** The name each scorer sent goes by, its own or else its type; undefined where it has neither. */
function namesSent(value: unknown): (string | undefined)[] {
  if (!Array.isArray(value)) return [];
  return value.map((sent: unknown) => {
    if (typeof sent !== 'object' || sent === null) return undefined;
    const { name, type } = sent as Record<string, unknown>;
    const goesBy = name ?? type;
    return typeof goesBy === 'string' ? goesBy : undefined;
  });
}

/** `scorers` + `[1, 'value']` → `scorers[1].value`. */
function fieldPath(field: string, path: readonly PropertyKey[]): string {
  return path.reduce<string>((out, segment) => (typeof segment === 'number' ? `${out}[${segment}]` : `${out}.${String(segment)}`), field);
}

/**
 * Whether the scorer compares with the item's `expected`: a text or pattern scorer without a
 * `value`. `llm_judge` does not need it (a real judge grades by the rubric alone; the offline one
 * scores 0 without it, with the reason).
 */
export function needsExpected(spec: ScorerSpec): boolean {
  return (spec.type === 'contains' || spec.type === 'exact' || spec.type === 'regex') && spec.value === undefined;
}

/** The names of the scorers that need every item to have an `expected`: an eval over items lacking it is refused. */
export function scorersNeedingExpected(specs: readonly ScorerSpec[]): string[] {
  return specs.filter(needsExpected).map((spec) => spec.name);
}

/**
 * The score of one output. A bad output is a failed score with its reason, never a throw; only
 * an abort through `deps.signal` rejects.
 */
export async function score(spec: ScorerSpec, sample: Sample, deps: ScoreDeps): Promise<Score> {
  switch (spec.type) {
    case 'contains':
    case 'exact':
      return textScore(spec, sample);
    case 'regex':
      return regexScore(spec, sample);
    case 'json_schema': {
      const checked = checkOutput(spec.schema, sample.output);
      return checked.passed ? passedScore(spec) : failedScore(spec, checked.reason);
    }
    case 'llm_judge':
      return judgeScore(spec, sample, deps);
  }
}

function textScore(spec: ContainsSpec | ExactSpec, sample: Sample): Score {
  const reference = spec.value ?? sample.expected;
  if (reference === undefined || reference === null) return failedScore(spec, NO_EXPECTED);
  const fold = (text: string): string => (spec.case_sensitive ? text : text.toLowerCase());
  const wanted = fold(reference.trim());
  if (spec.type === 'exact') {
    return fold(sample.output.trim()) === wanted ? passedScore(spec) : failedScore(spec, `The output is not ${quoted(reference.trim())}${spec.case_sensitive ? '' : ' (case aside)'}.`);
  }
  // Everything contains the empty text: a blank expected answer would pass any output.
  if (wanted === '') return failedScore(spec, "There is nothing to look for: the item's expected answer is blank.");
  return fold(sample.output).includes(wanted) ? passedScore(spec) : failedScore(spec, `The output does not contain ${quoted(reference.trim())}${spec.case_sensitive ? '' : ' (case aside)'}.`);
}

function regexScore(spec: RegexSpec, sample: Sample): Score {
  const source = spec.value ?? sample.expected;
  if (source === undefined || source === null) return failedScore(spec, NO_EXPECTED);
  // The empty pattern matches every output, as the empty text is in every one.
  if (source === '') return failedScore(spec, "There is nothing to match: the item's expected answer is empty.");
  const compiled = compilePattern(source);
  // The scorer's own value was checked when the eval was created; an item's expected never was.
  if (typeof compiled === 'string') return failedScore(spec, `${spec.value === undefined ? "The item's expected answer" : 'The pattern'} ${compiled}.`);
  const tooLong = beyondBudget(compiled.programSize(), sample.output, 'this pattern');
  if (tooLong !== undefined) return failedScore(spec, tooLong);
  return compiled.test(sample.output) ? passedScore(spec) : failedScore(spec, `The output does not match ${quoted(source)}.`);
}

const NO_EXPECTED = 'This scorer has no value of its own, so it compares with the item\'s expected answer, and the item has none.';

/** A compared text as a reason quotes it: short enough to leave room for the rest. */
function quoted(text: string): string {
  return JSON.stringify(bounded(text, 200));
}
