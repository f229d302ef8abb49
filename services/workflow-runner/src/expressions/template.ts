import type { FieldErrors } from '@agent-platform/kit';
import { LRUCache } from 'lru-cache';
import { compileExpression, ExpressionError, type CompiledExpression, type ExpressionScope } from './expressions.js';

/*
 * Templates: text with `{{ <CEL expression> }}` placeholders over the expression scope.
 * A placeholder renders a string as-is, null (or a missing optional) as nothing, a number or
 * bool as its JSON text, a list or map as JSON. There is no escape for a literal `{{`.
 */

export interface CompiledTemplate {
  readonly text: string;
  /** Throws ExpressionError naming the placeholder when one fails. */
  render(scope: ExpressionScope): string;
}

const MAX_VALUE_DEPTH = 64; // nesting of JSON values walked by renderValue / checkTemplates

/** literals[0], placeholders[0], literals[1], … literals[n]: one literal more than placeholders. */
class Template implements CompiledTemplate {
  constructor(
    readonly text: string,
    private readonly literals: string[],
    private readonly placeholders: CompiledExpression[],
  ) {}

  render(scope: ExpressionScope): string {
    let out = this.literals[0] ?? '';
    this.placeholders.forEach((placeholder, index) => {
      let value: unknown;
      try {
        value = placeholder.evaluate(scope);
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        throw new ExpressionError(`placeholder {{ ${placeholder.source.trim()} }}: ${message}`, { cause: error });
      }
      out += asText(value) + (this.literals[index + 1] ?? '');
    });
    return out;
  }
}

function asText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value); // JSON has no NaN
  return JSON.stringify(value);
}

const plain = (text: string): CompiledTemplate => ({ text, render: () => text });

// Rendered once per node execution, so compiled once per text; long texts are not kept.
const cache = new LRUCache<string, CompiledTemplate | string>({ max: 1_000 });
const MAX_CACHED_LENGTH = 16_384; // characters

/** Splits and compiles the placeholders; an error message naming what is wrong otherwise. */
export function compileTemplate(text: string): CompiledTemplate | string {
  if (!text.includes('{{')) return plain(text);
  let compiled = cache.get(text);
  if (compiled === undefined) {
    compiled = compileUncached(text);
    if (text.length <= MAX_CACHED_LENGTH) cache.set(text, compiled);
  }
  return compiled;
}

function compileUncached(text: string): CompiledTemplate | string {
  const literals: string[] = [];
  const placeholders: CompiledExpression[] = [];
  let position = 0;
  for (let open = text.indexOf('{{'); open !== -1; open = text.indexOf('{{', position)) {
    literals.push(text.slice(position, open));
    const close = closingBraces(text, open + 2);
    if (close === -1) return `has an unclosed {{ at character ${open + 1}`;
    const source = text.slice(open + 2, close);
    if (source.trim() === '') return `has an empty placeholder at character ${open + 1}`;
    const compiled = compileExpression(source);
    if (typeof compiled === 'string') return `placeholder {{ ${abbreviate(source.trim())} }} at character ${open + 1}: ${compiled}`;
    placeholders.push(compiled);
    position = close + 2;
  }
  literals.push(text.slice(position));
  return new Template(text, literals, placeholders);
}

/**
 * Where the placeholder opened before `start` closes: the first `}}` outside a string literal and
 * outside the expression's own braces (`{{ {"a": {"b": 1}}.a }}`). -1 when it never does.
 */
function closingBraces(text: string, start: number): number {
  let depth = 0;
  for (let i = start; i < text.length; i++) {
    const char = text[i];
    if (char === '"' || char === "'") {
      i = endOfString(text, i);
      if (i === -1) return -1;
    } else if (char === '{') {
      depth++;
    } else if (char === '}') {
      if (depth === 0 && text[i + 1] === '}') return i;
      if (depth > 0) depth--;
    }
  }
  return -1;
}

/**
 * The index of the quote ending the CEL string literal opening at `start`, or -1. A backslash
 * always skips the next character: cel-js reads raw strings (`r"..."`) that way too.
 */
function endOfString(text: string, start: number): number {
  const quote = text[start] as string;
  const closing = text.startsWith(quote.repeat(3), start) ? quote.repeat(3) : quote;
  for (let i = start + closing.length; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text.startsWith(closing, i)) return i + closing.length - 1;
  }
  return -1;
}

function abbreviate(source: string): string {
  return source.length > 60 ? `${source.slice(0, 57)}...` : source;
}

/**
 * Renders every string inside a JSON value (object values and list items, not keys) as a
 * template; other values are returned as they are. Strings stay strings.
 */
export function renderValue(value: unknown, scope: ExpressionScope): unknown {
  return mapStrings(value, 0, (text) => {
    const template = compileTemplate(text);
    // Saved configs passed checkTemplates; a failure here means the config was not checked.
    if (typeof template === 'string') throw new ExpressionError(`template ${template}`);
    return template.render(scope);
  });
}

function mapStrings(value: unknown, depth: number, render: (text: string) => string): unknown {
  if (typeof value === 'string') return render(value);
  if (typeof value !== 'object' || value === null) return value;
  if (depth >= MAX_VALUE_DEPTH) throw new ExpressionError(`value nests deeper than ${MAX_VALUE_DEPTH} levels`);
  if (Array.isArray(value)) return value.map((item) => mapStrings(item, depth + 1, render));
  const result: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    Object.defineProperty(result, key, { value: mapStrings(item, depth + 1, render), enumerable: true, writable: true, configurable: true });
  }
  return result;
}

/** Adds a field error at the path of every bad template inside `value`, e.g. `…body.items[2]`. */
export function checkTemplates(value: unknown, path: string, errors: FieldErrors, depth = 0): void {
  if (typeof value === 'string') {
    const template = compileTemplate(value);
    if (typeof template === 'string') errors.add(path, template);
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  if (depth >= MAX_VALUE_DEPTH) {
    errors.add(path, `must not nest deeper than ${MAX_VALUE_DEPTH} levels`);
    return;
  }
  if (Array.isArray(value)) {
    value.forEach((item, index) => checkTemplates(item, `${path}[${index}]`, errors, depth + 1));
    return;
  }
  for (const [key, item] of Object.entries(value)) checkTemplates(item, keyPath(path, key), errors, depth + 1);
}

/** `config.body.text`, or `config.headers["x-kind"]` for a key that is not a plain name. */
export function keyPath(path: string, key: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

/** True when the text has at least one placeholder (so it cannot be checked as a literal). */
export function hasPlaceholder(text: string): boolean {
  return text.includes('{{');
}
