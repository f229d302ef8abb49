import { Optional } from '@marcbachmann/cel-js';

/*
 * cel-js types values by their JavaScript type: a `bigint` is a CEL int, a `number` a CEL double.
 * JSON has one number type, so a JSON integer handed over as-is would be a double and
 * `input.count * 2` would fail (CEL has no double * int). JSON integers therefore become ints
 * here (as in most CEL hosts that know the schema), and the environment adds mixed int/double
 * arithmetic and equality for what is left (`input.price * 2` with price 1.5).
 */

// Integers beyond this cannot be told apart from their neighbours as JSON numbers; they stay doubles.
const SAFE = Number.MAX_SAFE_INTEGER;

/** JSON (or JSON-like) value → CEL value: integers become bigint, objects null-prototype maps. */
export function toCel(value: unknown): unknown {
  switch (typeof value) {
    case 'number':
      return Number.isInteger(value) && Math.abs(value) <= SAFE ? BigInt(value) : value;
    case 'string':
    case 'boolean':
    case 'bigint':
      return value;
    case 'object':
      if (value === null) return null;
      if (Array.isArray(value)) return value.map((item) => (item === undefined ? null : toCel(item)));
      if (value instanceof Date) return value.toISOString();
      return toCelMap(value);
    default:
      return null; // undefined, functions, symbols: what JSON.stringify would drop or null
  }
}

function toCelMap(value: object): Record<string, unknown> {
  // No prototype: nothing but the object's own data is reachable from an expression.
  const map = Object.create(null) as Record<string, unknown>;
  for (const [key, item] of Object.entries(value)) {
    if (item !== undefined && typeof item !== 'function' && typeof item !== 'symbol') map[key] = toCel(item);
  }
  return map;
}

/** CEL value → JSON-friendly value: ints become numbers (digits as a string beyond 2^53). */
export function fromCel(value: unknown): unknown {
  switch (typeof value) {
    case 'bigint':
      return bigintToJson(value);
    case 'object':
      if (value === null) return null;
      if (Array.isArray(value)) return value.map(fromCel);
      if (value instanceof Optional) return value.hasValue() ? fromCel(value.value()) : null;
      if (value instanceof Date) return value.toISOString();
      if (value instanceof Uint8Array) return Buffer.from(value).toString('base64');
      if (value instanceof Map) return mapToJson(value.entries());
      if (isPlainObject(value)) return mapToJson(Object.entries(value));
      return opaqueToJson(value);
    default:
      return value;
  }
}

function bigintToJson(value: bigint): number | string {
  return value >= -SAFE && value <= SAFE ? Number(value) : value.toString();
}

function mapToJson(entries: Iterable<[unknown, unknown]>): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  for (const [key, item] of entries) {
    // defineProperty: a key named `__proto__` stays data instead of replacing the prototype.
    Object.defineProperty(result, String(key), { value: fromCel(item), enumerable: true, writable: true, configurable: true });
  }
  return result;
}

function isPlainObject(value: object): boolean {
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === null || proto === Object.prototype;
}

/** cel-js's own value classes (uint, duration, type), which it does not export. */
function opaqueToJson(value: object): unknown {
  const primitive = value.valueOf();
  if (typeof primitive === 'bigint') return bigintToJson(primitive); // uint
  if ('name' in value && typeof value.name === 'string') return value.name; // type(x)
  return (value as { toString(): string }).toString(); // duration: "3600s"
}

/** A CEL type name for messages: `int`, `double`, `string`, `list`, `map`, `null`… */
export function celTypeName(value: unknown): string {
  switch (typeof value) {
    case 'bigint':
      return 'int';
    case 'number':
      return 'double';
    case 'boolean':
      return 'bool';
    case 'string':
      return 'string';
    case 'object':
      if (value === null) return 'null';
      if (Array.isArray(value)) return 'list';
      if (value instanceof Uint8Array) return 'bytes';
      if (value instanceof Date) return 'timestamp';
      return isPlainObject(value) || value instanceof Map ? 'map' : 'value';
    default:
      return typeof value;
  }
}
