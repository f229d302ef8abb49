import { ConnectionException, UniqueConstraintViolationException } from '@mikro-orm/postgresql';
import { DomainError } from '../errors.js';

/** Socket-level failures of node:net and DNS while reaching the server. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * SQLSTATEs that mean "the server cannot serve you right now": class 08 (connection exception),
 * 53300 too_many_connections, 57P01–57P03 (shutdown, crash recovery, starting up).
 */
const UNAVAILABLE_SQLSTATES = new Set(['53300', '57P01', '57P02', '57P03']);

/** Messages of `pg` and `pg-pool` that carry no code. */
const UNAVAILABLE_MESSAGES = [
  /connection terminated/i,
  /timeout exceeded when trying to connect/i,
  /client has encountered a connection error/i,
  /cannot use a pool after calling end/i,
  /connection not established/i,
];

/**
 * SQLSTATEs of input PostgreSQL cannot store: 22021 (a byte sequence invalid in the encoding, e.g.
 * NUL in text), 22P05 (an untranslatable character, e.g. `\u0000` in jsonb).
 */
const UNSTORABLE_SQLSTATES = new Set(['22021', '22P05']);

/**
 * A NUL in a bound parameter breaks the extended-protocol message itself: the server answers
 * 08P01 "invalid message format". Class 08 otherwise means a lost connection; this one is the
 * request's fault, and retrying it would fail the same way.
 */
function isUnstorableInput(error: unknown): boolean {
  const code = codeOf(error);
  if (code !== undefined && UNSTORABLE_SQLSTATES.has(code)) return true;
  return code === '08P01' && error instanceof Error && /invalid message format/i.test(error.message);
}

/**
 * For GrpcServer's `classifyError`: input the database cannot store (a NUL character) is the
 * caller's `invalid_request` (400); a lost or unreachable database is `service_unavailable` (503:
 * retry later), and nothing else is. Anything else is not ours to classify: undefined.
 */
export function classifyDbError(error: unknown): DomainError | undefined {
  for (const candidate of causeChain(error)) {
    if (isUnstorableInput(candidate)) {
      return new DomainError('invalid_request', 'The request contains a character that cannot be stored (such as NUL, U+0000).', { cause: error });
    }
  }
  for (const candidate of causeChain(error)) {
    if (isUnavailable(candidate)) {
      return new DomainError('service_unavailable', 'The database is unavailable; retry shortly.', { cause: error });
    }
  }
  return undefined;
}

/** True for a unique-index violation, optionally of one named constraint or index. */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  for (const candidate of causeChain(error)) {
    const isUnique =
      candidate instanceof UniqueConstraintViolationException || codeOf(candidate) === '23505';
    if (!isUnique) continue;
    if (constraint === undefined) return true;
    const named = (candidate as { constraint?: unknown }).constraint;
    if (named === constraint) return true;
    if (candidate instanceof Error && candidate.message.includes(`"${constraint}"`)) return true;
  }
  return false;
}

function isUnavailable(error: unknown): boolean {
  if (error instanceof ConnectionException) return true;
  const code = codeOf(error);
  if (code === '08P01') return false;
  if (code !== undefined) {
    if (NETWORK_CODES.has(code) || UNAVAILABLE_SQLSTATES.has(code)) return true;
    if (/^08[0-9A-Z]{3}$/.test(code)) return true;
  }
  if (error instanceof Error) return UNAVAILABLE_MESSAGES.some((pattern) => pattern.test(error.message));
  return false;
}

function codeOf(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? code : undefined;
}

/** The error, its `cause`s and the members of an AggregateError (a refused dual-stack connect). */
function* causeChain(error: unknown, depth = 0): Generator<unknown> {
  if (error === undefined || error === null || depth > 8) return;
  yield error;
  if (error instanceof AggregateError) {
    for (const inner of error.errors) yield* causeChain(inner, depth + 1);
  }
  if (error instanceof Error && error.cause !== undefined) yield* causeChain(error.cause, depth + 1);
}
