import { DomainError, FieldErrors, type FieldError } from '@agent-platform/kit';
import { describe, expect, it } from 'vitest';
import { checkScorers, needsExpected, scorersNeedingExpected, type ScorerSpec } from '../../src/evals/scorers.js';

/** The scorers as checked, or the validation error's details. */
function checked(value: unknown): { specs: ScorerSpec[] } | { details: FieldError[] } {
  const errors = new FieldErrors();
  const specs = checkScorers(value, errors);
  try {
    errors.throwIfAny();
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    // The gateway answers this code 422, naming each field.
    expect(error.code).toBe('validation_error');
    return { details: error.details };
  }
  return { specs };
}

function specsOf(value: unknown): ScorerSpec[] {
  const result = checked(value);
  if (!('specs' in result)) throw new Error(`refused: ${JSON.stringify(result.details)}`);
  return result.specs;
}

function refusals(value: unknown): FieldError[] {
  const result = checked(value);
  if (!('details' in result)) throw new Error('accepted');
  return result.details;
}

describe('checkScorers accepts', () => {
  it('each type, filling in the defaults: name from the type, case-insensitive, threshold 0.5', () => {
    const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
    expect(
      specsOf([
        { type: 'contains' },
        { type: 'exact', value: 'Paris', case_sensitive: true, name: 'exactly Paris' },
        { type: 'regex', value: '\\bParis\\b' },
        { type: 'json_schema', schema },
        { type: 'llm_judge', rubric: 'Is it polite?' },
      ]),
    ).toEqual([
      { type: 'contains', case_sensitive: false, name: 'contains' },
      { type: 'exact', value: 'Paris', case_sensitive: true, name: 'exactly Paris' },
      { type: 'regex', value: '\\bParis\\b', name: 'regex' },
      { type: 'json_schema', schema, name: 'json_schema' },
      { type: 'llm_judge', rubric: 'Is it polite?', threshold: 0.5, name: 'llm_judge' },
    ]);
  });

  it('scorers of one type told apart by their names, and ten of them', () => {
    const ten = Array.from({ length: 10 }, (_, index) => ({ type: 'contains', value: `word ${index}`, name: `has word ${index}` }));
    expect(specsOf(ten)).toHaveLength(10);
  });

  it('thresholds at both ends, and a schema keeping a __proto__ key as a key', () => {
    expect(specsOf([{ type: 'llm_judge', rubric: 'r', threshold: 0, name: 'a' }, { type: 'llm_judge', rubric: 'r', threshold: 1, name: 'b' }]).map((spec) => spec.type === 'llm_judge' && spec.threshold)).toEqual([0, 1]);
    const schema = JSON.parse('{"type":"object","properties":{"__proto__":{"type":"string"}}}') as Record<string, unknown>;
    const [spec] = specsOf([{ type: 'json_schema', schema }]);
    expect(spec?.type === 'json_schema' && Object.keys(spec.schema['properties'] as object)).toEqual(['__proto__']);
  });
});

describe('checkScorers refuses, naming each field', () => {
  it.each<[string, unknown, FieldError[]]>([
    ['not a list', { type: 'contains' }, [{ field: 'scorers', message: 'must be a list' }]],
    ['no scorers', [], [{ field: 'scorers', message: 'must hold 1 to 10 scorers' }]],
    ['eleven scorers', Array.from({ length: 11 }, (_, index) => ({ type: 'contains', name: `c${index}` })), [{ field: 'scorers', message: 'must hold 1 to 10 scorers' }]],
    ['a scorer that is not an object', [5], [{ field: 'scorers[0]', message: 'must be an object' }]],
    ['an unknown type', [{ type: 'similarity' }], [{ field: 'scorers[0].type', message: 'must be one of "contains", "exact", "regex", "json_schema", "llm_judge"' }]],
    ['no type', [{ value: 'x' }], [{ field: 'scorers[0].type', message: 'must be one of "contains", "exact", "regex", "json_schema", "llm_judge"' }]],
    ['an option the type does not take', [{ type: 'regex', value: 'a', case_sensitive: true }], [{ field: 'scorers[0]', message: 'has keys it does not take: case_sensitive' }]],
    ['a blank value', [{ type: 'contains', value: '  ' }], [{ field: 'scorers[0].value', message: 'must not be blank' }]],
    ['a value that is not text', [{ type: 'exact', value: 42 }], [{ field: 'scorers[0].value', message: 'must be text' }]],
    ['case_sensitive that is not a boolean', [{ type: 'exact', case_sensitive: 'yes' }], [{ field: 'scorers[0].case_sensitive', message: 'must be true or false' }]],
    ['a blank name', [{ type: 'contains', name: ' ' }], [{ field: 'scorers[0].name', message: 'must not be blank' }]],
    ['a name of 65 characters', [{ type: 'contains', name: 'n'.repeat(65) }], [{ field: 'scorers[0].name', message: 'must be at most 64 characters' }]],
    ['an empty pattern', [{ type: 'regex', value: '' }], [{ field: 'scorers[0].value', message: 'must not be empty' }]],
    ['a pattern of 1,001 characters', [{ type: 'regex', value: 'a'.repeat(1_001) }], [{ field: 'scorers[0].value', message: 'must be at most 1,000 characters' }]],
    ['a rubric of 4,001 characters', [{ type: 'llm_judge', rubric: 'r'.repeat(4_001) }], [{ field: 'scorers[0].rubric', message: 'must be at most 4,000 characters' }]],
    ['a blank rubric', [{ type: 'llm_judge', rubric: '\n' }], [{ field: 'scorers[0].rubric', message: 'must not be blank' }]],
    ['no rubric', [{ type: 'llm_judge' }], [{ field: 'scorers[0].rubric', message: 'is required' }]],
    ['a threshold above 1', [{ type: 'llm_judge', rubric: 'r', threshold: 1.01 }], [{ field: 'scorers[0].threshold', message: 'must be at most 1' }]],
    ['a negative threshold', [{ type: 'llm_judge', rubric: 'r', threshold: -0.5 }], [{ field: 'scorers[0].threshold', message: 'must be at least 0' }]],
    ['no schema', [{ type: 'json_schema' }], [{ field: 'scorers[0].schema', message: 'is required' }]],
    ['a schema that is a list', [{ type: 'json_schema', schema: [] }], [{ field: 'scorers[0].schema', message: 'must be a JSON Schema object' }]],
    ['a schema that is true', [{ type: 'json_schema', schema: true }], [{ field: 'scorers[0].schema', message: 'must be a JSON Schema object' }]],
  ])('%s', (_label, value, details) => {
    expect(refusals(value)).toEqual(details);
  });

  it('an invalid pattern, with what is wrong with it', () => {
    expect(refusals([{ type: 'regex', value: '(unclosed' }])).toEqual([
      { field: 'scorers[0].value', message: 'is not a valid pattern (RE2 syntax: no look-around or back-references): error parsing regexp: missing closing ): `(unclosed`' },
    ]);
  });

  it('a pattern that only a backtracking engine runs (look-ahead, back-reference)', () => {
    const [lookahead, backreference] = refusals([
      { type: 'regex', value: 'Paris(?= is)', name: 'a' },
      { type: 'regex', value: '(\\w+) \\1', name: 'b' },
    ]);
    expect(lookahead).toEqual({ field: 'scorers[0].value', message: expect.stringContaining('invalid or unsupported Perl syntax: `(?=`') });
    expect(backreference).toEqual({ field: 'scorers[1].value', message: expect.stringContaining('invalid escape sequence: `\\1`') });
  });

  it('a pattern too large to match in bounded time', () => {
    expect(specsOf([{ type: 'regex', value: '[a-z]{990}' }])).toHaveLength(1);
    expect(refusals([{ type: 'regex', value: '[a-z]{999}' }])).toEqual([{ field: 'scorers[0].value', message: 'is too large a pattern: it compiles to 1,001 instructions, at most 1,000' }]);
  });

  it('a schema that does not compile as draft 2020-12, with what is wrong with it', () => {
    const [unknownType, danglingRef] = refusals([
      { type: 'json_schema', schema: { type: 'text' }, name: 'a' },
      { type: 'json_schema', schema: { $ref: '#/$defs/missing' }, name: 'b' },
    ]);
    expect(unknownType).toEqual({ field: 'scorers[0].schema', message: expect.stringMatching(/^is not a valid JSON Schema \(draft 2020-12\): schema is invalid: data\/type must be equal to one of the allowed values/) });
    expect(danglingRef).toEqual({ field: 'scorers[1].schema', message: "is not a valid JSON Schema (draft 2020-12): can't resolve reference #/$defs/missing from id #" });
  });

  it("a schema whose pattern RE2 cannot run, naming the pattern", () => {
    expect(refusals([{ type: 'json_schema', schema: { type: 'string', pattern: '^(?!admin)' } }])).toEqual([
      { field: 'scorers[0].schema', message: expect.stringContaining('the pattern "^(?!admin)" is not a valid pattern (RE2 syntax') },
    ]);
  });

  it('a schema of more than 32,000 characters as JSON', () => {
    const schema = { description: 'd'.repeat(32_000) };
    expect(refusals([{ type: 'json_schema', schema }])).toEqual([{ field: 'scorers[0].schema', message: 'must be at most 32,000 characters as JSON' }]);
  });

  it('two scorers of one name, the second named, a defaulted name counting as its type', () => {
    expect(refusals([{ type: 'contains' }, { type: 'exact', name: 'same' }, { type: 'contains', value: 'x' }, { type: 'regex', value: 'y', name: 'same' }])).toEqual([
      { field: 'scorers[2].name', message: 'must be unique within the eval: scorers[0] is also named "contains" (a name defaults to the type)' },
      { field: 'scorers[3].name', message: 'must be unique within the eval: scorers[1] is also named "same" (a name defaults to the type)' },
    ]);
  });

  it("a type's name given to another scorer", () => {
    expect(refusals([{ type: 'llm_judge', rubric: 'r', name: 'regex' }, { type: 'regex', value: 'y' }])).toEqual([
      { field: 'scorers[1].name', message: 'must be unique within the eval: scorers[0] is also named "regex" (a name defaults to the type)' },
    ]);
  });

  it('every fault at once, a duplicate name among them', () => {
    expect(refusals([{ type: 'contains' }, { type: 'contains', case_sensitive: 1 }, { type: 'regex', value: '(' }])).toEqual([
      { field: 'scorers[1].case_sensitive', message: 'must be true or false' },
      { field: 'scorers[2].value', message: expect.stringContaining('missing closing )') },
      { field: 'scorers[1].name', message: expect.stringContaining('must be unique within the eval') },
    ]);
  });

  it('under the field the caller names', () => {
    const errors = new FieldErrors();
    checkScorers([], errors, 'eval.scorers');
    expect(() => errors.throwIfAny()).toThrow(expect.objectContaining({ details: [{ field: 'eval.scorers', message: 'must hold 1 to 10 scorers' }] }));
  });
});

describe('which scorers need the item’s expected answer', () => {
  const specs = specsOf([
    { type: 'contains' },
    { type: 'contains', value: 'Paris', name: 'has Paris' },
    { type: 'exact', name: 'exact match' },
    { type: 'exact', value: 'Paris', name: 'is Paris' },
    { type: 'regex', name: 'matches expected' },
    { type: 'regex', value: '\\d+', name: 'has a number' },
    { type: 'json_schema', schema: { type: 'object' } },
    { type: 'llm_judge', rubric: 'Correct?' },
  ]);

  it('text and pattern scorers without a value of their own, and no others (not the judge)', () => {
    expect(scorersNeedingExpected(specs)).toEqual(['contains', 'exact match', 'matches expected']);
    expect(specs.map(needsExpected)).toEqual([true, false, true, false, true, false, false, false]);
  });
});
