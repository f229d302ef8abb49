import { characters, DECISION_COMMENT_MAX, END_USER_ID_MAX, ERROR_CODES } from '@agent-platform/kit';
import { z } from 'zod';
import { UNPARSABLE } from './validation.js';

/** The flat error body of decisions §2; a shared OpenAPI component (each status: error-responses.ts). */
export const ErrorSchema = z
  .object({
    error: z.enum(Object.keys(ERROR_CODES) as [keyof typeof ERROR_CODES, ...(keyof typeof ERROR_CODES)[]]),
    message: z.string(),
    details: z.array(z.object({ field: z.string(), message: z.string() })).optional(),
    retry_after: z.int().optional().describe('Seconds to wait; with rate_limit_exceeded only.'),
  })
  .meta({ id: 'Error', description: 'Every failure, decisions §2.' });

/** ISO 8601 UTC with milliseconds and Z, as every timestamp of the API. */
export const Timestamp = z.iso
  .datetime({ precision: 3 })
  .meta({ id: 'Timestamp', description: 'ISO 8601 UTC with milliseconds, e.g. 2026-01-02T03:04:05.006Z.' });

/** A whole number from the URL's text: text that is not one is 400, one out of range 422 (decisions §2). */
function wholeNumber(min: number, max: number) {
  return z
    .string()
    .check((ctx) => {
      if (!/^-?\d{1,15}$/.test(ctx.value)) {
        ctx.issues.push({ code: 'custom', message: 'Must be a whole number.', input: ctx.value, params: { reason: UNPARSABLE } });
      }
    })
    .transform(Number)
    .pipe(z.int().min(min).max(max));
}

/** An integer read from the query string: text that is not a number is 400, out of range 422. */
export function queryInt(options: { min: number; max: number; fallback: number; description: string }) {
  return wholeNumber(options.min, options.max)
    .optional()
    .transform((value) => value ?? options.fallback)
    // Documented as the integer it is read as, not as the query string's text.
    .meta({ type: 'integer', minimum: options.min, maximum: options.max, description: `${options.description} Default ${options.fallback}.` });
}

/**
 * An instant read from the query string (`since`, `until`): ISO 8601 with an offset or `Z`, any
 * precision. Text that is not one is 400 (decisions §2).
 */
export function queryTime(description: string) {
  return z
    .string()
    .check((ctx) => {
      if (!z.iso.datetime({ offset: true }).safeParse(ctx.value).success) {
        ctx.issues.push({ code: 'custom', message: 'Must be an ISO 8601 date-time, e.g. 2026-01-02T03:04:05Z.', input: ctx.value, params: { reason: UNPARSABLE } });
      }
    })
    .transform((value) => new Date(value))
    .optional()
    // Documented as the date-time it is read as.
    .meta({ type: 'string', format: 'date-time', description });
}

/** An integer path parameter (a version's number): text that is not a number is 400, out of range 422. */
function pathInt(options: { min: number; max: number; description: string }) {
  // Documented as the integer it is read as, not as the path's text.
  return wholeNumber(options.min, options.max).meta({ type: 'integer', minimum: options.min, maximum: options.max, description: options.description });
}

/** A version named by its number (a workflow's, decisions §13.1; an agent's, §16): the path parameter that is not an id. */
export const VersionNumber = pathInt({ min: 1, max: 2_147_483_647, description: 'The version, from 1.' });

/** A path parameter naming a resource by its id (decisions §1: `<resource>_id`, ids `<prefix>_<ULID>`). */
export function pathId(what: string, prefix: string) {
  return z.string().min(1).describe(`The ${what}'s id (${prefix}_…).`);
}

/**
 * decisions §14: an end user of the tenant's own application, as the tenant names them. The
 * service decides the rest (not blank, no control characters) and names the field.
 */
export const EndUserId = z
  .string()
  .min(1)
  .max(END_USER_ID_MAX)
  .describe(`An end user of your application, in your own words: 1..${END_USER_ID_MAX} characters.`);

/** Why a person decided as they did; `shown` says where the comment goes. */
export function decisionComment(shown: string) {
  return z
    .string()
    .max(DECISION_COMMENT_MAX)
    .optional()
    .describe(`Why; ${shown} (up to ${characters(DECISION_COMMENT_MAX)} characters).`);
}

export const TenantQuery = z.object({
  tenant_id: z.string().min(1).optional().describe('The tenant to act in; default: your first tenant (JWT) or the key\'s tenant.'),
});

/** decisions §5: `page` from 1, `per_page` 1..100 (default 20). */
export const Paging = z.object({
  page: queryInt({ min: 1, max: 1_000_000, fallback: 1, description: 'Page number, from 1.' }),
  per_page: queryInt({ min: 1, max: 100, fallback: 20, description: 'Items per page, 1..100.' }),
});

export const PageQuery = TenantQuery.extend(Paging.shape);

export function pageOf<Item extends z.ZodType>(item: Item) {
  return z.object({ items: z.array(item), total: z.int(), page: z.int(), per_page: z.int() });
}

export const SuccessSchema = z.object({ success: z.literal(true), message: z.string() });

/** A required timestamp from a gRPC answer; its absence is an upstream defect (500). */
export function iso(date: Date | undefined): string {
  if (!date) throw new Error('A required timestamp is missing from an upstream answer.');
  return date.toISOString();
}

export function isoOrNull(date: Date | undefined): string | null {
  return date ? date.toISOString() : null;
}
