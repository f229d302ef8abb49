import { FieldErrors, type DomainError } from '@agent-platform/kit';
import { describe, expect, it } from 'vitest';
import { ExpressionError, type ExpressionScope } from './expressions.js';
import { checkTemplates, compileTemplate, renderValue, type CompiledTemplate } from './template.js';

const scope: ExpressionScope = {
  input: { name: 'Ada', amount: 150, price: 1.25, items: [1, 'two', { three: 3 }], nothing: null, vip: true },
  nodes: { fetch: { output: { status: 200, body: { id: 'x1' } } } },
  request: { query: { page: '2' }, headers: { 'x-kind': 'a' } },
};

function template(text: string): CompiledTemplate {
  const compiled = compileTemplate(text);
  if (typeof compiled === 'string') throw new Error(`${text}: ${compiled}`);
  return compiled;
}

function render(text: string): string {
  return template(text).render(scope);
}

function fieldErrors(check: (errors: FieldErrors) => void): { field: string; message: string }[] {
  const errors = new FieldErrors();
  check(errors);
  try {
    errors.throwIfAny();
  } catch (error) {
    return (error as DomainError).details;
  }
  return [];
}

describe('templates', () => {
  it('render several placeholders', () => {
    expect(render('Hello {{ input.name }}, total {{ input.amount * 2 }}')).toBe('Hello Ada, total 300');
    expect(render('{{input.name}}{{input.name}}')).toBe('AdaAda');
    expect(render('status {{ nodes.fetch.output.status }} for {{ nodes.fetch.output.body.id }}, kind {{ request.headers["x-kind"] }}')).toBe(
      'status 200 for x1, kind a',
    );
  });

  it('render numbers, bools, null, lists and maps', () => {
    expect(render('{{ input.price }} {{ input.price * 2 }} {{ input.amount / 7 }} {{ input.amount / 7.0 }}')).toBe('1.25 2.5 21 21.428571428571427');
    expect(render('[{{ input.vip }}] [{{ input.nothing }}] [{{ input.?missing }}]')).toBe('[true] [] []');
    expect(render('{{ input.items }}')).toBe('[1,"two",{"three":3}]');
    expect(render('{{ nodes.fetch.output }}')).toBe('{"status":200,"body":{"id":"x1"}}');
    expect(render('{{ 9223372036854775807 }}')).toBe('9223372036854775807');
  });

  it('find the end of a placeholder past braces and strings inside it', () => {
    expect(render('{{ {"a": {"b": 1}}.a.b }}!')).toBe('1!');
    expect(render('{{ "}}" + input.name }}')).toBe('}}Ada');
    expect(render("{{ '}}' }} {{ r\"\\d}}\" }} {{ \"\\\"}}\" }}")).toBe('}} \\d}} "}}');
    expect(render('{{ """x}}y""" }}')).toBe('x}}y');
    expect(render('a }} b')).toBe('a }} b');
  });

  it('return text without placeholders as it is', () => {
    const plain = template('no placeholders { here }');
    expect(plain.render(scope)).toBe('no placeholders { here }');
    expect(render('')).toBe('');
  });

  it('are compiled once per text', () => {
    expect(compileTemplate('Hi {{ input.name }}')).toBe(compileTemplate('Hi {{ input.name }}'));
  });

  it.each([
    ['Hi {{ input.name', /unclosed \{\{ at character 4/],
    ['Hi {{ "}} ', /unclosed \{\{ at character 4/],
    ['{{ }}', /empty placeholder at character 1/],
    ['x {{ input.name + }}', /placeholder \{\{ input.name \+ \}\} at character 3: unexpected token/],
    ['{{ nope }}', /unknown variable: nope/],
    ['{{ input.s.matches(input.p) }}', /string literal pattern/],
  ])('refuse %s', (text, message) => {
    expect(compileTemplate(text)).toMatch(message);
  });

  it('fail at run time naming the placeholder', () => {
    expect(() => render('Hi {{ input.missing }}')).toThrow(new ExpressionError('placeholder {{ input.missing }}: no such key: missing'));
    expect(() => render('{{ input.name * 2 }}')).toThrow(ExpressionError);
  });
});

describe('renderValue', () => {
  it('renders every string inside a JSON value and keeps the rest', () => {
    const body = { text: 'Hi {{ input.name }}', n: 1, ok: true, none: null, list: ['{{ input.amount }}', 2], nested: { 'x-y': '{{ input.vip }}' } };
    expect(renderValue(body, scope)).toEqual({ text: 'Hi Ada', n: 1, ok: true, none: null, list: ['150', 2], nested: { 'x-y': 'true' } });
    expect(renderValue('{{ input.name }}', scope)).toBe('Ada');
    expect(renderValue(3, scope)).toBe(3);
    expect(renderValue({ '{{ input.name }}': 'key' }, scope)).toEqual({ '{{ input.name }}': 'key' });
  });

  it('keeps a key named __proto__ as data', () => {
    const rendered = renderValue(JSON.parse('{"__proto__": {"a": "{{ input.name }}"}}'), scope) as Record<string, unknown>;
    expect(Object.keys(rendered)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(rendered)).toBe(Object.prototype);
  });

  it('throws ExpressionError on a failing placeholder', () => {
    expect(() => renderValue({ a: ['{{ input.missing }}'] }, scope)).toThrow(/no such key: missing/);
  });
});

describe('checkTemplates', () => {
  it('names the path of every bad template', () => {
    const body = { text: 'Hi {{ input.name', ok: '{{ input.name }}', list: ['fine', '{{ }}'], headers: { 'x-kind': '{{ 1 + }}' }, n: 5 };
    expect(fieldErrors((errors) => checkTemplates(body, 'nodes[3].config.body', errors))).toEqual([
      { field: 'nodes[3].config.body.text', message: expect.stringMatching(/unclosed/) },
      { field: 'nodes[3].config.body.list[1]', message: expect.stringMatching(/empty placeholder/) },
      { field: 'nodes[3].config.body.headers["x-kind"]', message: expect.stringMatching(/unexpected token/) },
    ]);
  });

  it('accepts good templates and plain values', () => {
    expect(fieldErrors((errors) => checkTemplates({ a: '{{ input.a }}', b: [1, null, true] }, 'body', errors))).toEqual([]);
    expect(fieldErrors((errors) => checkTemplates('{{ bad', 'nodes[0].config.message', errors))).toEqual([
      { field: 'nodes[0].config.message', message: expect.stringMatching(/unclosed/) },
    ]);
  });

  it('refuses values nested too deeply', () => {
    let deep: unknown = 'x';
    for (let i = 0; i < 100; i++) deep = [deep];
    expect(fieldErrors((errors) => checkTemplates(deep, 'body', errors))).toEqual([{ field: expect.stringMatching(/^body(\[0\])+$/), message: expect.stringMatching(/deeper than 64/) }]);
  });
});
