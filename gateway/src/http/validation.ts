import { DomainError, type FieldError } from '@agent-platform/kit';
import type { FastifySchemaCompiler } from 'fastify';
import type { z } from 'zod';
import { forPeople, REQUIRED } from './messages.js';

/** Marks an issue as "could not be read at all" (400) rather than "read but not acceptable" (422). */
export const UNPARSABLE = 'unparsable';

type Issue = z.core.$ZodIssue;

/** `['nodes', 2, 'config', 'path']` → `nodes[2].config.path`. */
export function fieldPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else out += out === '' ? String(segment) : `.${String(segment)}`;
  }
  return out;
}

function isMissing(issue: Issue): boolean {
  return issue.code === 'invalid_type' && issue.message === REQUIRED;
}

/** Present but unreadable as its type; a required parameter that is absent was read fine (422). */
function isUnparsable(issue: Issue): boolean {
  return (issue.code === 'invalid_type' && !isMissing(issue)) || (issue.code === 'custom' && issue.params?.['reason'] === UNPARSABLE);
}

function detail(issue: Issue): FieldError {
  return { field: fieldPath(issue.path), message: issue.message };
}

/**
 * decisions §2 for request parts: a body that is not a JSON object, or a query or path value that
 * cannot be read as its type, is 400 invalid_request; anything that was read but breaks a rule is
 * 422 validation_error. Both name each offending field.
 */
export function requestError(issues: readonly Issue[], httpPart: string | undefined): DomainError {
  const details = issues.map(detail);
  if (httpPart === 'body' && issues.some((issue) => issue.path.length === 0)) {
    return new DomainError('invalid_request', 'The request body must be a JSON object.');
  }
  if ((httpPart === 'querystring' || httpPart === 'params') && issues.some(isUnparsable)) {
    const where = httpPart === 'params' ? 'path' : 'query';
    return new DomainError('invalid_request', `A ${where} parameter could not be parsed.`, {
      details: issues.filter(isUnparsable).map(detail),
    });
  }
  return DomainError.validation(details);
}

/** A request part parsed, its refusals worded for the people who read them (see `forPeople`). */
export function parseForPeople<Schema extends z.ZodType>(schema: Schema, data: unknown): z.ZodSafeParseResult<z.output<Schema>> {
  return schema.safeParse(data, { error: forPeople });
}

/** Zod validation whose failures are already the platform's DomainErrors. */
export const validatorCompiler: FastifySchemaCompiler<z.ZodType> =
  ({ schema, httpPart }) =>
  (data: unknown) => {
    if (httpPart === 'body') {
      const unstorable = nulFields(data);
      if (unstorable.length > 0) return { error: DomainError.validation(unstorable) };
    }
    const result = parseForPeople(schema, data);
    if (result.success) return { value: result.data };
    return { error: requestError(result.error.issues, httpPart) };
  };

/**
 * For a route that takes a JSON body or a multipart/form-data one: the form's parser leaves the
 * body empty (the route reads the form itself, as it streams), so an empty body passes here and
 * the route tells a form from a missing (or JSON `null`) body; any other body is validated as everywhere.
 */
export const formOrJsonValidatorCompiler: FastifySchemaCompiler<z.ZodType> = (route) => {
  const validate = validatorCompiler(route);
  if (route.httpPart !== 'body') return validate;
  return (data: unknown) => (data === undefined || data === null ? { value: data } : validate(data));
};

// PostgreSQL stores no NUL (U+0000) in text, so such input is refused here, at the edge, with a
// clear answer, rather than failing deep down in a service.
const NUL = '\u0000';
const ENCODED_NUL = /%00/i;
const MESSAGE = 'must not contain the NUL character (U+0000).';

/** 400 when the path or the query string carries an encoded NUL (`%00`). */
export function checkUrl(url: string): void {
  if (ENCODED_NUL.test(url)) throw new DomainError('invalid_request', 'The URL contains a NUL character (%00).');
}

/** The fields of a parsed JSON body whose keys or string values contain NUL, as field paths. */
export function nulFields(value: unknown, path: PropertyKey[] = []): FieldError[] {
  if (typeof value === 'string') return value.includes(NUL) ? [{ field: fieldPath(path) || '(body)', message: MESSAGE }] : [];
  if (Array.isArray(value)) return value.flatMap((item, index) => nulFields(item, [...path, index]));
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([key, item]) =>
    key.includes(NUL) ? [{ field: fieldPath([...path, key]), message: `Keys ${MESSAGE}` }] : nulFields(item, [...path, key]),
  );
}
