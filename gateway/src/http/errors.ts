import { DomainError, errorBody, httpStatusOf, type ErrorBody } from '@agent-platform/kit';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';

const MASKED = 'An unexpected error occurred.';

/** 5xx answers carry fixed text: a message from deeper down could hold internals. */
const FIXED_5XX: Record<number, string> = {
  500: MASKED,
  502: 'An upstream service failed; retry later.',
  503: 'A dependency is unavailable; retry shortly.',
};

function isFastifyError(error: unknown): error is FastifyError {
  return error instanceof Error && typeof (error as Partial<FastifyError>).code === 'string';
}

export function bodyTooLarge(bodyLimitBytes: number): DomainError {
  return new DomainError('payload_too_large', `The request body exceeds ${bodyLimitBytes} bytes.`);
}

/**
 * What a REST client may learn from a failure: DomainErrors as they are, Fastify's own request
 * errors translated to the catalogue. `undefined` means unexpected: logged in full, answered masked.
 */
export function toClientError(error: unknown, bodyLimitBytes: number): DomainError | undefined {
  if (error instanceof DomainError) return error;
  if (!isFastifyError(error)) return undefined;
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return bodyTooLarge(bodyLimitBytes);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new DomainError('invalid_request', 'Unsupported content type; send application/json.');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new DomainError('invalid_request', 'The JSON body is empty.');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new DomainError('invalid_request', 'The body is not valid JSON.');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new DomainError('invalid_request', 'The body size does not match Content-Length.');
    case 'FST_ERR_VALIDATION':
      return DomainError.validation([]);
    default:
      break;
  }
  const status = error.statusCode ?? 500;
  if (status === 404) return new DomainError('not_found', 'Not found.');
  if (status === 413) return bodyTooLarge(bodyLimitBytes);
  if (status >= 400 && status < 500) return new DomainError('invalid_request', error.message);
  return undefined;
}

/** A failure as a client sees it: the status and flat body of decisions §2, 5xx text masked. Logs what it must. */
export function clientFailure(error: unknown, request: FastifyRequest, bodyLimitBytes: number): { failure: DomainError; status: number; body: ErrorBody } {
  const known = toClientError(error, bodyLimitBytes);
  const failure = known ?? new DomainError('internal_error', MASKED);
  const status = httpStatusOf(failure.code);
  if (!known) {
    request.log.error({ err: error, request_id: request.id }, 'unexpected error');
  } else if (status >= 500) {
    request.log.warn({ err: error, request_id: request.id }, failure.message);
  }
  const body = errorBody(failure);
  if (status >= 500) body.message = FIXED_5XX[status] ?? MASKED;
  return { failure, status, body };
}

/** One reply for every failure: the flat body, its status, and the headers the code implies. */
export function sendError(error: unknown, request: FastifyRequest, reply: FastifyReply, bodyLimitBytes: number): FastifyReply {
  const { failure, status, body } = clientFailure(error, request, bodyLimitBytes);
  if (failure.code === 'unauthorized') {
    const presented = request.headers.authorization !== undefined;
    reply.header('www-authenticate', presented ? 'Bearer realm="agent-platform", error="invalid_token"' : 'Bearer realm="agent-platform"');
  }
  if (failure.code === 'rate_limit_exceeded' && failure.retryAfter !== undefined) {
    reply.header('retry-after', String(failure.retryAfter));
  }
  return reply.code(status).type('application/json; charset=utf-8').send(body);
}
