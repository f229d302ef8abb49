import { Metadata, status as GrpcStatus, type ServiceError, type StatusObject } from '@grpc/grpc-js';
import { ErrorDetail } from '@agent-platform/proto/common/v1';
import { codeForBareGrpcStatus, DomainError, grpcStatusOf, isErrorCode } from '../errors.js';
import { ERROR_KEY } from './metadata.js';

// One shared abort reason for a call that ended early: grpc-js reports `cancelled` at the end of
// many calls, and an Error per call (with its stack trace) is measurable on the hot path.
export const CALL_CANCELLED = new DomainError('service_unavailable', 'The call was cancelled.');

/** A DomainError as a gRPC status whose trailers carry the reason and field violations. */
export function toGrpcStatus(error: DomainError): Partial<StatusObject> {
  const metadata = new Metadata();
  const detail = ErrorDetail.encode({
    reason: error.code,
    fieldViolations: error.details.map((d) => ({ field: d.field, description: d.message })),
    retryAfterSeconds: error.retryAfter ?? 0,
  }).finish();
  metadata.set(ERROR_KEY, Buffer.from(detail));
  return { code: grpcStatusOf(error.code), details: error.message, metadata };
}

/** The inverse of toGrpcStatus; a failure without our trailer becomes a transport-level code. */
export function fromGrpcError(error: ServiceError): DomainError {
  const [raw] = error.metadata?.get(ERROR_KEY) ?? [];
  if (raw instanceof Buffer) {
    const detail = ErrorDetail.decode(raw);
    if (isErrorCode(detail.reason)) {
      return new DomainError(detail.reason, error.details, {
        details: detail.fieldViolations.map((v) => ({ field: v.field, message: v.description })),
        ...(detail.retryAfterSeconds > 0 ? { retryAfter: detail.retryAfterSeconds } : {}),
        cause: error,
      });
    }
  }
  const code = codeForBareGrpcStatus(error.code);
  const message =
    code === 'service_unavailable'
      ? 'A dependency of this service is unavailable; retry shortly.'
      : 'An unexpected error occurred.';
  return new DomainError(code, message, { cause: error });
}

export function isServiceError(value: unknown): value is ServiceError {
  return (
    value instanceof Error &&
    typeof (value as Partial<ServiceError>).code === 'number' &&
    (value as Partial<ServiceError>).metadata instanceof Metadata
  );
}

export { GrpcStatus };
