import { type ERROR_CODES, httpStatusOf, type ErrorCode } from '@agent-platform/kit';
import type { RoutePolicy } from '../auth/policy.js';
import { ErrorSchema } from './schemas.js';

/** Why an operation answers a code, when it gives no reason of its own (decisions §2). */
const GENERIC_REASONS: Record<ErrorCode, string> = {
  invalid_request: 'Malformed JSON, a content type other than JSON, or a URL, query or path parameter that cannot be read.',
  validation_error: 'The body or the query breaks a rule; `details` names each offending field.',
  unauthorized: 'No credential, or an invalid, expired or revoked one (with `WWW-Authenticate: Bearer`).',
  insufficient_credits: 'The tenant has not enough credits for the operation.',
  forbidden: 'The credential lacks the role or the API-key scope the operation needs, or names a tenant_id it is no member of.',
  not_found: 'No such resource in the tenant (one of another tenant is not found either).',
  conflict: 'The state of the resource does not allow the operation.',
  payload_too_large: 'The body exceeds the body limit (1 MiB by default).',
  unsupported_document: 'The file is of a type the platform cannot read, or is not what it claims (an encrypted PDF, a broken archive, a renamed binary).',
  rate_limit_exceeded: 'Too many requests; `retry_after` and `Retry-After` say when to try again.',
  internal_error: 'An unexpected failure; the body holds no internals.',
  upstream_error: 'The model or embedding provider failed or timed out.',
  service_unavailable: 'A dependency (a backend service, Redis) is unavailable; retry shortly.',
};

/** The codes an operation answers, each with the reason it does; absent reasons are the generic ones. */
export type ErrorReasons = Partial<Record<ErrorCode, string | undefined>>;

/**
 * One documented failure: the flat body of decisions §2 (the Error component), described by the
 * code and the reason (the response's description in the document). A zod schema, so that the
 * reply of a handler that sends one is typed, and the body is serialised as every error is.
 */
function errorResponse(code: ErrorCode, reason: string | undefined) {
  return ErrorSchema.describe(`\`${code}\`: ${reason ?? GENERIC_REASONS[code]}`);
}

export type ErrorResponse = ReturnType<typeof errorResponse>;

type StatusOf<Code extends ErrorCode> = (typeof ERROR_CODES)[Code]['http'];

/**
 * Response entries for the codes an operation answers beyond what its policy row and schema imply
 * (those `apiHooks` adds): `{ ...errorResponses({ conflict: 'The e-mail is already registered.' }) }`.
 * Keyed by each code's status (kit's table), so a handler's reply with that status is typed.
 */
export function errorResponses<const Reasons extends ErrorReasons>(reasons: Reasons): { [Code in keyof Reasons & ErrorCode as StatusOf<Code>]: ErrorResponse } {
  const responses: Record<number, ErrorResponse> = {};
  for (const [code, reason] of Object.entries(reasons) as [ErrorCode, string | undefined][]) {
    responses[httpStatusOf(code)] = errorResponse(code, reason);
  }
  return responses;
}

/** Response entries for `codes`, each with its generic reason. */
export function genericErrorResponses(codes: readonly ErrorCode[]): Record<number, ErrorResponse> {
  return errorResponses(Object.fromEntries(codes.map((code) => [code, undefined])) as ErrorReasons);
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

export interface RouteShape {
  methods: readonly string[];
  schema: { body?: unknown; querystring?: unknown; params?: unknown } | undefined;
}

/**
 * What every route of a policy row can answer whatever its handler does: the guard of its row
 * (unauthorized and forbidden for a credential, rate_limit_exceeded for everyone, counted per
 * tenant or per client IP, service_unavailable while a backend or Redis is away) and what its
 * request parts can break (a path parameter names something that may not be there; a body may be
 * malformed, too large or invalid). Without a row (the probes) only a malformed URL and the
 * unexpected remain.
 */
export function impliedErrors(route: RouteShape, policy: RoutePolicy | undefined): ErrorCode[] {
  const codes: ErrorCode[] = ['invalid_request', 'internal_error'];
  if (policy) codes.push('rate_limit_exceeded', 'service_unavailable');
  if (policy && policy.auth !== 'none') codes.push('unauthorized', 'forbidden');
  if (route.schema?.body !== undefined || route.schema?.querystring !== undefined) codes.push('validation_error');
  if (route.methods.some((method) => BODY_METHODS.has(method))) codes.push('payload_too_large');
  if (route.schema?.params !== undefined) codes.push('not_found');
  return codes;
}

/** `response` with an entry for each implied code it does not document already (its own reason wins). */
export function withImpliedErrors(response: Record<string, unknown> | undefined, codes: readonly ErrorCode[]): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...genericErrorResponses(codes) };
  for (const [status, entry] of Object.entries(response ?? {})) merged[status] = entry;
  return merged;
}
