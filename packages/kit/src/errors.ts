import { status as GrpcStatus } from '@grpc/grpc-js';

/** The error catalogue of decisions §2. `code` is what REST clients see in `error`. */
export const ERROR_CODES = {
  invalid_request: { http: 400, grpc: GrpcStatus.INVALID_ARGUMENT },
  validation_error: { http: 422, grpc: GrpcStatus.INVALID_ARGUMENT },
  unauthorized: { http: 401, grpc: GrpcStatus.UNAUTHENTICATED },
  insufficient_credits: { http: 402, grpc: GrpcStatus.RESOURCE_EXHAUSTED },
  forbidden: { http: 403, grpc: GrpcStatus.PERMISSION_DENIED },
  not_found: { http: 404, grpc: GrpcStatus.NOT_FOUND },
  conflict: { http: 409, grpc: GrpcStatus.FAILED_PRECONDITION },
  payload_too_large: { http: 413, grpc: GrpcStatus.INVALID_ARGUMENT },
  /** A file the platform cannot read, or that is not what it claims (decisions §17). */
  unsupported_document: { http: 422, grpc: GrpcStatus.INVALID_ARGUMENT },
  rate_limit_exceeded: { http: 429, grpc: GrpcStatus.RESOURCE_EXHAUSTED },
  internal_error: { http: 500, grpc: GrpcStatus.INTERNAL },
  upstream_error: { http: 502, grpc: GrpcStatus.UNAVAILABLE },
  service_unavailable: { http: 503, grpc: GrpcStatus.UNAVAILABLE },
} as const satisfies Record<string, { http: number; grpc: GrpcStatus }>;

export type ErrorCode = keyof typeof ERROR_CODES;

export interface FieldError {
  /** JSON-pointer-ish path, e.g. `nodes[2].config.path`. */
  field: string;
  message: string;
}

export interface DomainErrorOptions {
  details?: FieldError[];
  /** Seconds; only for rate_limit_exceeded. */
  retryAfter?: number;
  cause?: unknown;
}

/** The one error type domain code throws. Transports translate it; nothing else is a client error. */
export class DomainError extends Error {
  override readonly name = 'DomainError';
  readonly code: ErrorCode;
  readonly details: FieldError[];
  readonly retryAfter: number | undefined;

  constructor(code: ErrorCode, message: string, options: DomainErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.details = options.details ?? [];
    this.retryAfter = options.retryAfter;
  }

  static validation(details: FieldError[], message = 'The request did not pass validation.'): DomainError {
    return new DomainError('validation_error', message, { details });
  }

  static notFound(what: string): DomainError {
    return new DomainError('not_found', `${what} not found.`);
  }
}

export function isErrorCode(value: string): value is ErrorCode {
  return Object.hasOwn(ERROR_CODES, value);
}

export function httpStatusOf(code: ErrorCode): number {
  return ERROR_CODES[code].http;
}

export function grpcStatusOf(code: ErrorCode): GrpcStatus {
  return ERROR_CODES[code].grpc;
}

/** For a gRPC failure that carries no reason (a transport fault, a foreign server). */
export function codeForBareGrpcStatus(status: GrpcStatus): ErrorCode {
  switch (status) {
    case GrpcStatus.UNAVAILABLE:
    case GrpcStatus.DEADLINE_EXCEEDED:
    case GrpcStatus.CANCELLED:
      return 'service_unavailable';
    case GrpcStatus.UNAUTHENTICATED:
      return 'unauthorized';
    case GrpcStatus.PERMISSION_DENIED:
      return 'forbidden';
    case GrpcStatus.NOT_FOUND:
      return 'not_found';
    default:
      return 'internal_error';
  }
}

/** The flat REST error body of decisions §2. */
export interface ErrorBody {
  error: ErrorCode;
  message: string;
  details?: FieldError[];
  retry_after?: number;
}

export function errorBody(error: DomainError): ErrorBody {
  const body: ErrorBody = { error: error.code, message: error.message };
  if (error.details.length > 0) body.details = error.details;
  if (error.retryAfter !== undefined) body.retry_after = error.retryAfter;
  return body;
}

/** Collects every problem of a request so the caller hears about all of them at once. */
export class FieldErrors {
  private readonly errors: FieldError[] = [];

  add(field: string, message: string): void {
    this.errors.push({ field, message });
  }

  /** Throws a validation_error naming each field, if any problem was found. */
  throwIfAny(): void {
    if (this.errors.length > 0) throw DomainError.validation([...this.errors]);
  }
}
