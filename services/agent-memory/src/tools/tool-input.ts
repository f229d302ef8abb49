import { Ajv2020 } from 'ajv/dist/2020.js';
import type { FieldErrors } from '@agent-platform/kit';
import type { OutboundPolicy } from '@agent-platform/kit/security';

// decisions §12
const NAME_PATTERN = /^[a-z][a-z0-9_]{0,63}$/;
const DESCRIPTION_MAX = 1_024;
// RFC 9110 token: what a header name may be.
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}$/;
const HEADER_VALUE_MAX = 8_192;
const HEADERS_MAX = 50;

export function checkName(name: string, errors: FieldErrors): string {
  if (!NAME_PATTERN.test(name)) errors.add('name', 'must match ^[a-z][a-z0-9_]{0,63}$: a lower-case letter, then up to 63 of a-z, 0-9 and _');
  return name;
}

export function checkDescription(description: string | undefined, errors: FieldErrors): string | null {
  if (description === undefined) return null;
  if (description.length > DESCRIPTION_MAX) errors.add('description', `must be at most ${DESCRIPTION_MAX} characters`);
  return description;
}

/** A JSON object from JSON text, or a problem named on `field`. */
export function parseObject(json: string | undefined, field: string, errors: FieldErrors): Record<string, unknown> | undefined {
  if (json === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    errors.add(field, 'must be a JSON object');
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    errors.add(field, 'must be an object');
    return undefined;
  }
  return value as Record<string, unknown>;
}

/**
 * A JSON Schema object that compiles as draft 2020-12: a schema the platform cannot compile could
 * not check a model's arguments later. A fresh Ajv each time, so a schema's `$id` never collides
 * with another tool's and nothing accumulates. Strict mode is off: keywords Ajv does not know
 * (`example`, `x-…`) are annotations, not mistakes.
 */
export function checkInputSchema(json: string | undefined, errors: FieldErrors): Record<string, unknown> {
  if (json === undefined) {
    errors.add('input_schema', 'is required: a JSON Schema object describing the arguments');
    return {};
  }
  const schema = parseObject(json, 'input_schema', errors);
  if (schema === undefined) return {};
  try {
    new Ajv2020({ strict: false, logger: false, allErrors: false }).compile(schema);
  } catch (error) {
    errors.add('input_schema', `is not a valid JSON Schema (draft 2020-12): ${(error as Error).message}`);
  }
  return schema;
}

/** decisions §12.5: a tool whose server gives each of its tools' schema (mcp) takes none of its own. */
export function refuseInputSchema(type: string, json: string | undefined, errors: FieldErrors): null {
  if (json !== undefined) errors.add('input_schema', `is not taken by an ${type} tool: the server gives each of its tools' schema (see discovered)`);
  return null;
}

/** The address the tool reaches, through the outbound address policy (decisions §8.3), as a webhook's. */
export async function checkUrl(config: Record<string, unknown>, policy: OutboundPolicy, errors: FieldErrors): Promise<string | undefined> {
  if (typeof config.url !== 'string' || config.url.trim() === '') {
    errors.add('config.url', 'is required: the address the tool calls');
    return undefined;
  }
  const problem = await policy.checkUrl(config.url.trim());
  if (problem === undefined) return config.url.trim();
  errors.add('config.url', problem);
  return undefined;
}

export function checkHeaders(config: Record<string, unknown>, errors: FieldErrors): Record<string, string> {
  if (config.headers === undefined || config.headers === null) return {};
  if (typeof config.headers !== 'object' || Array.isArray(config.headers)) {
    errors.add('config.headers', 'must be an object of header names to string values');
    return {};
  }
  const headers: [string, string][] = [];
  const entries = Object.entries(config.headers as Record<string, unknown>);
  if (entries.length > HEADERS_MAX) errors.add('config.headers', `must hold at most ${HEADERS_MAX} headers`);
  for (const [name, value] of entries) {
    if (!HEADER_NAME.test(name)) errors.add(`config.headers.${name}`, 'is not a valid header name');
    else if (typeof value !== 'string' || value.length > HEADER_VALUE_MAX || /[\r\n\0]/.test(value)) {
      errors.add(`config.headers.${name}`, `must be a string of at most ${HEADER_VALUE_MAX} characters without line breaks`);
    } else headers.push([name, value]);
  }
  // Entries, not assignments: a header named __proto__ stays a header.
  return Object.fromEntries(headers);
}
