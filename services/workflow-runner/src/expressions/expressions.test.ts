import { describe, expect, it } from 'vitest';
import { compileCondition, compileExpression, evaluateCondition, ExpressionError, MAX_EXPRESSION_LENGTH, type CompiledExpression, type ExpressionScope } from './expressions.js';

function scope(input: unknown, extra: Partial<ExpressionScope> = {}): ExpressionScope {
  return { input, nodes: {}, request: { query: {}, headers: {} }, ...extra };
}

function compiled(source: string): CompiledExpression {
  const result = compileCondition(source);
  if (typeof result === 'string') throw new Error(`${source}: ${result}`);
  return result;
}

function condition(source: string, input: unknown, extra: Partial<ExpressionScope> = {}): boolean {
  return evaluateCondition(compiled(source), scope(input, extra), 'rule 1');
}

function value(source: string, input: unknown): unknown {
  const result = compileExpression(source);
  if (typeof result === 'string') throw new Error(`${source}: ${result}`);
  return result.evaluate(scope(input));
}

describe('conditions over JSON', () => {
  it.each([
    ['input.amount > 100', { amount: 150 }, { amount: 50 }],
    ['input.amount > 100', { amount: 100.5 }, { amount: 99.5 }],
    ['input.amount > 100.5', { amount: 150 }, { amount: 100 }],
    ['input.amount == 150', { amount: 150 }, { amount: 150.5 }],
    ['input.amount == 150.0', { amount: 150 }, { amount: 151 }],
    ['input.amount * 2 == 3', { amount: 1.5 }, { amount: 2 }],
    ['input.amount + 1 > 2.5', { amount: 2 }, { amount: 1 }],
    ['input.name == "x"', { name: 'x' }, { name: 'y' }],
    ['has(input.x)', { x: null }, {}],
    ['input.tags.exists(t, t == "vip")', { tags: ['a', 'vip'] }, { tags: [] }],
    ['size(input.items) > 2', { items: [1, 2, 3] }, { items: [1, 2] }],
    ['input.items[0] == 1 && input.items[1] == 2.5', { items: [1, 2.5] }, { items: [1, 2] }],
    ['"vip" in input.tags', { tags: ['vip'] }, { tags: ['x'] }],
    ['input.?discount.orValue(0) > 5', { discount: 10 }, {}],
    ['input.email.endsWith("@example.com")', { email: 'a@example.com' }, { email: 'a@example.org' }],
    ['input.code.matches("^[A-Z]{2}[0-9]+$")', { code: 'AB12' }, { code: 'ab12' }],
    ['input.count % 2 == 0', { count: 4 }, { count: 3 }],
    ['input.big > 9007199254740991', { big: 1e20 }, { big: 1 }],
  ])('%s', (source, yes, no) => {
    expect(condition(source, yes)).toBe(true);
    expect(condition(source, no)).toBe(false);
  });

  it('reads finished nodes and the webhook request', () => {
    const extra = { nodes: { fetch: { output: { status: 200 } } }, request: { query: { page: '2', tag: ['a', 'b'] }, headers: { 'x-kind': 'a' } } };
    expect(condition('nodes.fetch.output.status == 200', {}, extra)).toBe(true);
    expect(condition('nodes.fetch.output.status != 200', {}, extra)).toBe(false);
    expect(condition('request.headers["x-kind"] == "a"', {}, extra)).toBe(true);
    expect(condition('request.query.page == "2" && size(request.query.tag) == 2', {}, extra)).toBe(true);
    expect(condition('has(request.headers.authorization)', {}, extra)).toBe(false);
  });

  it('accepts any JSON as input, including a bare value', () => {
    expect(condition('input == 3', 3)).toBe(true);
    expect(condition('input == null', null)).toBe(true);
    expect(condition('input.__proto__ == 1', JSON.parse('{"__proto__": 1}'))).toBe(true);
  });
});

describe('expression values', () => {
  it('come back as JSON', () => {
    expect(value('input.amount * 2', { amount: 150 })).toBe(300);
    expect(value('input.amount * 2', { amount: 1.25 })).toBe(2.5);
    expect(value('input.items.map(i, i * 10)', { items: [1, 2] })).toEqual([10, 20]);
    expect(value('{"a": input.n, "b": [true, null]}', { n: 1 })).toEqual({ a: 1, b: [true, null] });
    expect(value('size("héllo")', {})).toBe(5);
    expect(value('9223372036854775807', {})).toBe('9223372036854775807');
    expect(value('b"hi"', {})).toBe('aGk=');
    expect(value('duration("90s")', {})).toBe('90s');
    expect(value('timestamp("2024-01-01T00:00:00Z")', {})).toBe('2024-01-01T00:00:00.000Z');
    expect(value('type(1)', {})).toBe('int');
    expect(value('1u', {})).toBe(1);
    expect(value('input.?missing', {})).toBeNull();
  });
});

describe('compile errors', () => {
  it.each([
    ['syntax', 'input.amount >', /unexpected token/],
    ['string', '"abc', /unterminated string/],
    ['variable', 'amount > 1', /unknown variable: amount/],
    ['function', 'foo(1)', /no matching overload/],
    ['types', '1 + "a"', /no such overload: int \+ string/],
    ['int result', '1 + 2', /must evaluate to a bool, not int/],
    ['string result', '"x"', /must evaluate to a bool, not string/],
    ['empty', ' ', /must not be empty/],
    ['too long', 'x'.repeat(MAX_EXPRESSION_LENGTH + 1), /at most 4096 characters/],
    ['too deep', `${'('.repeat(40)}true${')'.repeat(40)}`, /nests too deeply/],
    ['too many nodes', `${'1+'.repeat(1_500)}1 == 1`, /too large/],
  ])('%s', (_name, source, message) => {
    const result = compileCondition(source);
    expect(typeof result).toBe('string');
    expect(result).toMatch(message);
  });

  it('names where the problem is', () => {
    expect(compileCondition('input.a > > 1')).toMatch(/at character \d+/);
  });

  it('is cached by source text', () => {
    expect(compileCondition('input.cached == 1')).toBe(compileCondition('input.cached == 1'));
  });
});

describe('runtime errors', () => {
  it('name the rule and the missing key', () => {
    expect(() => condition('input.amount > 1', {})).toThrow(new ExpressionError('rule 1: no such key: amount'));
    expect(() => condition('nodes.fetch.output.ok', {})).toThrow(/rule 1: no such key: fetch/);
    expect(() => condition('input.items[3] == 1', { items: [] })).toThrow(/index out of bounds/);
  });

  it('refuse a result that is not a bool', () => {
    expect(() => condition('input.flag', { flag: 'yes' })).toThrow(new ExpressionError('rule 1 did not evaluate to a bool (got string)'));
    expect(() => condition('input.flag', { flag: 1 })).toThrow(/got int/);
    expect(() => condition('input.flag', {})).toThrow(/no such key: flag/);
  });

  it('report type mismatches and arithmetic faults', () => {
    expect(() => condition('input.name > 1', { name: 'x' })).toThrow(/rule 1: no such overload/);
    expect(() => condition('input.n / 0 == 1', { n: 1 })).toThrow(/division by zero/);
    expect(() => condition('input.n + 1 > 0', { n: 9223372036854775807n })).toThrow(/overflow/);
  });
});

describe('sandbox', () => {
  it.each(['constructor', 'this', 'process', 'globalThis', 'require', 'Function', 'eval'])('no global named %s', (name) => {
    expect(compileCondition(`${name} == null`)).toMatch(/unknown variable/);
  });

  it.each(['input.constructor', 'input["constructor"]', 'input.__proto__', 'input.toString', 'input.hasOwnProperty', '{"a": 1}.constructor', '[].constructor'])(
    '%s is no property of the JSON',
    (source) => {
      expect(() => condition(`${source} != null`, { a: 1 })).toThrow(/no such key|no such overload|no matching overload|list index must be int/);
    },
  );

  it('keeps the payload from reaching prototypes', () => {
    const input = JSON.parse('{"__proto__": {"polluted": true}}') as unknown;
    expect(condition('has(input.__proto__.polluted)', input)).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(() => condition('has(input.polluted)', input)).not.toThrow();
    expect(condition('has(input.polluted)', input)).toBe(false);
  });
});

describe('regular expressions', () => {
  it('refuse patterns that are not literals', () => {
    expect(compileCondition('input.s.matches(input.pattern)')).toMatch(/string literal pattern/);
  });

  it.each([
    ['(a)\\\\1', /backreferences/],
    ['(?=a)a', /lookahead or lookbehind/],
    ['(?<!a)b', /lookahead or lookbehind/],
    ['a{1,17}', /more than 16/],
    ['(a{1,5}){1,5}', /nest a counted repetition/],
    ['(', /not a valid regular expression/],
    ['a'.repeat(300), /at most 256/],
  ])('refuse %s', (pattern, message) => {
    expect(compileCondition(`input.s.matches("${pattern}")`)).toMatch(message);
  });

  it('accept ordinary patterns and still run fast on hostile input', () => {
    const rule = compiled('input.s.matches("^(a+)+$")');
    const started = Date.now();
    expect(evaluateCondition(rule, scope({ s: `${'a'.repeat(40)}!` }))).toBe(false);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(condition('input.s.matches("[{}]x{2}\\\\{")', { s: '{xx{' })).toBe(true);
  });
});
