import { FieldErrors } from '@agent-platform/kit';
import { RE2JS } from 're2js';
import { describe, expect, it } from 'vitest';
import { MATCH_BUDGET } from '../../src/evals/patterns.js';
import { checkScorers, score, type Sample, type Score, type ScoreDeps } from '../../src/evals/scorers.js';
import type { ChatModel } from '../../src/models/chat-model.js';

// Deterministic scorers never ask a model: one that is asked fails the test.
const untouchable: ChatModel = {
  name: 'untouchable',
  complete: () => Promise.reject(new Error('a deterministic scorer asked the judge')),
  stream: () => {
    throw new Error('a deterministic scorer asked the judge');
  },
};
const deps: ScoreDeps = { judge: untouchable };

/** Scores one sample with one scorer given as the API takes it. */
async function scored(sent: Record<string, unknown>, sample: Partial<Sample> & { output: string }): Promise<Score> {
  const errors = new FieldErrors();
  const [spec] = checkScorers([sent], errors);
  errors.throwIfAny();
  if (spec === undefined) throw new Error('no scorer');
  return score(spec, { input: 'the question', ...sample }, deps);
}

const pass = (name: string, type: string): Score => ({ name, type, score: 1, passed: true }) as Score;

describe('contains', () => {
  it("passes when the output contains the item's expected answer, case aside by default", async () => {
    expect(await scored({ type: 'contains' }, { output: 'The capital is PARIS.', expected: 'paris' })).toEqual(pass('contains', 'contains'));
  });

  it('fails, saying what was missing, when it does not', async () => {
    expect(await scored({ type: 'contains' }, { output: 'The capital is Lyon.', expected: 'Paris' })).toEqual({
      name: 'contains',
      type: 'contains',
      score: 0,
      passed: false,
      reason: 'The output does not contain "Paris" (case aside).',
    });
  });

  it('uses its own value over the expected answer', async () => {
    expect(await scored({ type: 'contains', value: 'Lyon', name: 'lyon' }, { output: 'Lyon, then Paris', expected: 'Marseille' })).toEqual(pass('lyon', 'contains'));
    expect(await scored({ type: 'contains', value: 'Lyon' }, { output: 'Marseille', expected: 'Marseille' })).toMatchObject({ passed: false, score: 0 });
  });

  it('tells case apart when case_sensitive', async () => {
    expect(await scored({ type: 'contains', case_sensitive: true }, { output: 'The capital is PARIS.', expected: 'Paris' })).toMatchObject({
      passed: false,
      reason: 'The output does not contain "Paris".',
    });
    expect(await scored({ type: 'contains', case_sensitive: true }, { output: 'in Paris', expected: 'Paris' })).toMatchObject({ passed: true });
  });

  it('looks for the expected answer trimmed', async () => {
    expect(await scored({ type: 'contains' }, { output: 'Paris.', expected: '  Paris\n' })).toMatchObject({ passed: true });
  });

  it('fails when the item has no expected answer, or a blank one that every output would contain', async () => {
    expect(await scored({ type: 'contains' }, { output: 'Paris' })).toMatchObject({ passed: false, reason: expect.stringContaining('the item has none') });
    expect(await scored({ type: 'contains' }, { output: 'Paris', expected: null })).toMatchObject({ passed: false, reason: expect.stringContaining('the item has none') });
    expect(await scored({ type: 'contains' }, { output: 'Paris', expected: ' ' })).toMatchObject({ passed: false, reason: expect.stringContaining('blank') });
  });
});

describe('exact', () => {
  it('passes when the trimmed output equals the trimmed expected answer, case aside by default', async () => {
    expect(await scored({ type: 'exact' }, { output: '  paris\n', expected: 'Paris ' })).toEqual(pass('exact', 'exact'));
  });

  it('fails when the output only contains it', async () => {
    expect(await scored({ type: 'exact' }, { output: 'Paris, France', expected: 'Paris' })).toEqual({
      name: 'exact',
      type: 'exact',
      score: 0,
      passed: false,
      reason: 'The output is not "Paris" (case aside).',
    });
  });

  it('tells case apart when case_sensitive, and uses its own value', async () => {
    expect(await scored({ type: 'exact', value: 'OK', case_sensitive: true }, { output: 'ok' })).toMatchObject({ passed: false, reason: 'The output is not "OK".' });
    expect(await scored({ type: 'exact', value: 'OK', case_sensitive: true }, { output: 'OK' })).toMatchObject({ passed: true, score: 1 });
  });

  it('fails without an expected answer', async () => {
    expect(await scored({ type: 'exact' }, { output: '' })).toMatchObject({ passed: false, score: 0, reason: expect.stringContaining('the item has none') });
  });

  it('never cuts a quoted answer inside a surrogate pair', async () => {
    const result = await scored({ type: 'exact' }, { output: 'short', expected: '😀'.repeat(150) });
    expect(result.reason).toBe(`The output is not "${'😀'.repeat(99)}…" (case aside).`);
  });

  it('quotes a long expected answer cut short, within the bound on reasons', async () => {
    const result = await scored({ type: 'exact' }, { output: 'short', expected: 'x'.repeat(10_000) });
    expect(result.reason).toBe(`The output is not "${'x'.repeat(199)}…" (case aside).`);
  });
});

describe('regex', () => {
  it('passes when its pattern matches anywhere in the output', async () => {
    expect(await scored({ type: 'regex', value: '\\b\\d{5}\\b', name: 'zip' }, { output: 'Send it to 75001 Paris.' })).toEqual(pass('zip', 'regex'));
  });

  it('fails, naming the pattern, when it does not', async () => {
    expect(await scored({ type: 'regex', value: '^\\d+$' }, { output: 'forty-two' })).toEqual({
      name: 'regex',
      type: 'regex',
      score: 0,
      passed: false,
      reason: 'The output does not match "^\\\\d+$".',
    });
  });

  it('is case-sensitive unless the pattern says (?i)', async () => {
    expect(await scored({ type: 'regex', value: 'paris' }, { output: 'PARIS' })).toMatchObject({ passed: false });
    expect(await scored({ type: 'regex', value: '(?i)paris' }, { output: 'PARIS' })).toMatchObject({ passed: true });
  });

  it("takes the item's expected answer as the pattern when it has no value", async () => {
    expect(await scored({ type: 'regex' }, { output: 'Order #1234 is on its way', expected: '#\\d{4}' })).toMatchObject({ passed: true });
    expect(await scored({ type: 'regex' }, { output: 'Order #12 is on its way', expected: '#\\d{4}' })).toMatchObject({ passed: false });
  });

  it('fails, with the parser’s reason, when the expected answer is not a usable pattern', async () => {
    expect(await scored({ type: 'regex' }, { output: 'anything', expected: 'a(b' })).toMatchObject({
      score: 0,
      passed: false,
      reason: "The item's expected answer is not a valid pattern (RE2 syntax: no look-around or back-references): error parsing regexp: missing closing ): `a(b`.",
    });
    expect(await scored({ type: 'regex' }, { output: 'anything', expected: '[a-z]{999}' })).toMatchObject({ passed: false, reason: expect.stringContaining('is too large a pattern') });
  });

  it('fails without an expected answer, and with an empty one that every output would match', async () => {
    expect(await scored({ type: 'regex' }, { output: 'x' })).toMatchObject({ passed: false, reason: expect.stringContaining('the item has none') });
    expect(await scored({ type: 'regex' }, { output: 'x', expected: '' })).toMatchObject({ passed: false, reason: expect.stringContaining('nothing to match') });
  });

  it('matches a pattern that would backtrack for ages in JavaScript, in linear time', async () => {
    // RegExp would try about 2^50,000 ways to split the a's before failing.
    const output = `${'a'.repeat(50_000)}!`;
    const started = performance.now();
    expect(await scored({ type: 'regex', value: '^(a+)+$' }, { output })).toMatchObject({ passed: false });
    expect(await scored({ type: 'regex', value: '(a|aa)+!' }, { output })).toMatchObject({ passed: true });
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it('fails an output too long for the pattern, rather than spending seconds on it', async () => {
    const pattern = '[a-z]{900}[0-9]';
    const instructions = RE2JS.compile(pattern).programSize();
    const longest = Math.floor(MATCH_BUDGET / instructions);
    expect(await scored({ type: 'regex', value: pattern }, { output: 'a'.repeat(longest) })).toMatchObject({ reason: 'The output does not match "[a-z]{900}[0-9]".' });
    expect(await scored({ type: 'regex', value: pattern }, { output: 'a'.repeat(longest + 1) })).toMatchObject({
      passed: false,
      reason: `The output is too long to match against this pattern: ${(longest + 1).toLocaleString('en')} characters, at most ${longest.toLocaleString('en')} for ${instructions} instructions of pattern.`,
    });
  });
});

describe('json_schema', () => {
  const schema = {
    type: 'object',
    properties: { city: { type: 'string' }, population: { type: 'integer', minimum: 0 } },
    required: ['city', 'population'],
    additionalProperties: false,
  };

  it('passes an output that is one JSON document valid against the schema', async () => {
    expect(await scored({ type: 'json_schema', schema, name: 'city json' }, { output: ' {"city":"Paris","population":2100000}\n' })).toEqual(pass('city json', 'json_schema'));
  });

  it('fails an output that is not JSON, or JSON with text around it', async () => {
    expect(await scored({ type: 'json_schema', schema }, { output: 'Paris' })).toMatchObject({ passed: false, reason: expect.stringMatching(/^The output is not one JSON document: /) });
    expect(await scored({ type: 'json_schema', schema }, { output: 'Here: {"city":"Paris","population":1}' })).toMatchObject({ passed: false, reason: expect.stringMatching(/^The output is not one JSON document/) });
    expect(await scored({ type: 'json_schema', schema }, { output: '{"city":"Paris","population":1} {"city":"Lyon","population":1}' })).toMatchObject({ passed: false });
  });

  it('fails a document the schema refuses, listing every fault', async () => {
    expect(await scored({ type: 'json_schema', schema }, { output: '{"city":7,"population":-1,"mayor":"x"}' })).toEqual({
      name: 'json_schema',
      type: 'json_schema',
      score: 0,
      passed: false,
      reason: 'The output does not match the schema: / must NOT have additional properties; /city must be string; /population must be >= 0.',
    });
  });

  it('names five faults at most, and how many more there were', async () => {
    const many = { type: 'array', items: { type: 'string' } };
    const result = await scored({ type: 'json_schema', schema: many }, { output: JSON.stringify([1, 2, 3, 4, 5, 6, 7]) });
    expect(result.reason).toBe('The output does not match the schema: /0 must be string; /1 must be string; /2 must be string; /3 must be string; /4 must be string (and 2 more).');
  });

  it("runs the schema's patterns with RE2: no catastrophic backtracking", async () => {
    const patterned = { type: 'object', properties: { code: { type: 'string', pattern: '^(a+)+$' } } };
    const started = performance.now();
    const result = await scored({ type: 'json_schema', schema: patterned }, { output: JSON.stringify({ code: `${'a'.repeat(50_000)}!` }) });
    expect(result).toMatchObject({ passed: false, reason: 'The output does not match the schema: /code must match pattern "^(a+)+$".' });
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(await scored({ type: 'json_schema', schema: patterned }, { output: '{"code":"aaa"}' })).toMatchObject({ passed: true });
  });

  it('fails an output too long for the schema’s patterns', async () => {
    const patterned = { type: 'object', patternProperties: { '^[a-z]{900}$': { type: 'string' } } };
    // `{"key":"` and `"}` around 60,000 v's; the pattern compiles to 904 instructions, so 50,000,000 / 904 characters at most.
    const result = await scored({ type: 'json_schema', schema: patterned }, { output: JSON.stringify({ key: 'v'.repeat(60_000) }) });
    expect(result).toMatchObject({ passed: false, reason: "The output is too long to match against the schema's patterns: 60,010 characters, at most 55,309 for 904 instructions of pattern." });
  });

  it('checks uniqueItems as JSON equality (key order aside), in linear time', async () => {
    const unique = { type: 'array', uniqueItems: true };
    expect(await scored({ type: 'json_schema', schema: unique }, { output: '[{"a":1,"b":[2]},{"b":[2],"a":1.0}]' })).toMatchObject({
      passed: false,
      reason: 'The output does not match the schema: / must not have duplicate items (items 0 and 1 are equal).',
    });
    expect(await scored({ type: 'json_schema', schema: unique }, { output: '[{"a":1},{"a":"1"},[1],1,"1",null,{"__proto__":1},{}]' })).toMatchObject({ passed: true });
    // Ajv's own pairwise comparison takes seconds for this; one pass takes milliseconds.
    const many = JSON.stringify(Array.from({ length: 20_000 }, (_, index) => ({ id: index })));
    const started = performance.now();
    expect(await scored({ type: 'json_schema', schema: unique }, { output: many })).toMatchObject({ passed: true });
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it('fails, without throwing, a document nested deeper than the validator can go', async () => {
    const nested = { $defs: { node: { type: 'array', items: { $ref: '#/$defs/node' } } }, $ref: '#/$defs/node' };
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    const result = await scored({ type: 'json_schema', schema: nested }, { output: deep });
    expect(result.score).toBe(0);
    expect(result.passed).toBe(false);
    expect(result.reason?.length).toBeLessThanOrEqual(500);
  });
});

describe('every deterministic scorer', () => {
  it('keeps its reason within 500 characters', async () => {
    const result = await scored({ type: 'json_schema', schema: { type: 'object', properties: { ['k'.repeat(600)]: { type: 'string' } } } }, { output: JSON.stringify({ ['k'.repeat(600)]: 1 }) });
    expect(result.reason).toHaveLength(500);
    expect(result.reason?.endsWith('…')).toBe(true);
  });
});
