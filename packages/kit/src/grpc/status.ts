import { Metadata, status as GrpcStatus, type ServiceError, type StatusObject } from '@grpc/grpc-js';
import { BadRequest, ErrorInfo, RetryInfo } from '@agent-platform/proto/google/rpc/error-details';
import { Status } from '@agent-platform/proto/google/rpc/status';
import { codeForBareGrpcStatus, DomainError, grpcStatusOf, isErrorCode, type DomainErrorOptions, type ErrorCode } from '../errors.js';

// One shared abort reason for a call that ended early: grpc-js reports `cancelled` at the end of
// many calls, and an Error per call (with its stack trace) is measurable on the hot path.
export const CALL_CANCELLED = new DomainError('service_unavailable', 'The call was cancelled.');

/** The trailer of the gRPC richer error model: a serialized google.rpc.Status. */
export const STATUS_DETAILS_KEY = 'grpc-status-details-bin';
/** ErrorInfo.domain of the platform's own errors; a reason from another domain is not ours. */
export const ERROR_DOMAIN = 'agentplatform';

const TYPE_URL = {
  errorInfo: 'type.googleapis.com/google.rpc.ErrorInfo',
  badRequest: 'type.googleapis.com/google.rpc.BadRequest',
  retryInfo: 'type.googleapis.com/google.rpc.RetryInfo',
} as const;

/**
 * A DomainError as a gRPC status whose `grpc-status-details-bin` trailer is a google.rpc.Status:
 * ErrorInfo{reason, domain} always, BadRequest with the field violations when there are any, and
 * RetryInfo when the error says when to retry. The reason is the catalogue code in the
 * UPPER_SNAKE_CASE that ErrorInfo documents (`not_found` is `NOT_FOUND`), so any gRPC language
 * reads it; the gRPC status code only carries the broad class.
 */
export function toGrpcStatus(error: DomainError): Partial<StatusObject> {
  const code = grpcStatusOf(error.code);
  const details = [pack(TYPE_URL.errorInfo, ErrorInfo.encode(ErrorInfo.fromPartial({ reason: error.code.toUpperCase(), domain: ERROR_DOMAIN })))];
  if (error.details.length > 0) {
    const fieldViolations = error.details.map((d) => ({ field: d.field, description: d.message }));
    details.push(pack(TYPE_URL.badRequest, BadRequest.encode(BadRequest.fromPartial({ fieldViolations }))));
  }
  if (error.retryAfter !== undefined) {
    details.push(pack(TYPE_URL.retryInfo, RetryInfo.encode({ retryDelay: durationOf(error.retryAfter) })));
  }
  const metadata = new Metadata();
  metadata.set(STATUS_DETAILS_KEY, Buffer.from(Status.encode({ code, message: error.message, details }).finish()));
  return { code, details: error.message, metadata };
}

/** The inverse of toGrpcStatus; a failure without our ErrorInfo becomes a transport-level code. */
export function fromGrpcError(error: ServiceError): DomainError {
  const [raw] = error.metadata?.get(STATUS_DETAILS_KEY) ?? [];
  const ours = raw instanceof Buffer ? decodeDetails(raw) : undefined;
  if (ours) return new DomainError(ours.code, ours.message, { ...ours.options, cause: error });
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

function pack(typeUrl: string, writer: { finish(): Uint8Array }) {
  return { typeUrl, value: Buffer.from(writer.finish()) };
}

/**
 * Our DomainError's parts from a google.rpc.Status, or undefined when its ErrorInfo is missing or
 * from another domain, or the trailer (another server's, say) does not parse.
 */
function decodeDetails(raw: Buffer): { code: ErrorCode; message: string; options: DomainErrorOptions } | undefined {
  try {
    const status = Status.decode(raw);
    const unpack = <T>(typeUrl: string, type: { decode(input: Uint8Array): T }): T | undefined => {
      const any = status.details.find((detail) => detail.typeUrl === typeUrl);
      return any && type.decode(any.value);
    };
    const info = unpack(TYPE_URL.errorInfo, ErrorInfo);
    const code = info?.reason.toLowerCase() ?? '';
    if (info?.domain !== ERROR_DOMAIN || !isErrorCode(code)) return undefined;
    const delay = unpack(TYPE_URL.retryInfo, RetryInfo)?.retryDelay;
    const violations = unpack(TYPE_URL.badRequest, BadRequest)?.fieldViolations ?? [];
    return {
      code,
      message: status.message,
      options: {
        details: violations.map((v) => ({ field: v.field, message: v.description })),
        ...(delay ? { retryAfter: delay.seconds + delay.nanos / 1e9 } : {}),
      },
    };
  } catch {
    return undefined;
  }
}

/** `seconds` (fractions kept as nanos) as a google.protobuf.Duration. */
function durationOf(seconds: number) {
  const whole = Math.trunc(seconds);
  return { seconds: whole, nanos: Math.round((seconds - whole) * 1e9) };
}

export { GrpcStatus };
