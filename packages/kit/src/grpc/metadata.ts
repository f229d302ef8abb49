import { Metadata } from '@grpc/grpc-js';
import { Principal } from '@agent-platform/proto/common/v1';
import { context, propagation, type Context } from '@opentelemetry/api';

export type { Principal } from '@agent-platform/proto/common/v1';
export { Principal_Kind as PrincipalKind } from '@agent-platform/proto/common/v1';

const PRINCIPAL_KEY = 'x-principal-bin';
const REQUEST_ID_KEY = 'x-request-id';

/**
 * What a call carries beside its message: who calls, for which request, and the caller's trace as
 * the configured propagator writes it (`traceparent`, …). The in-process transport hands this to
 * the server as it is; over HTTP/2 it travels as metadata (`toMetadata`, `fromMetadata`). Building
 * and reading grpc-js Metadata, the principal's protobuf included, took ~6.5 µs a call, against
 * ~0.8 µs for this object with its trace written and read by the same propagator.
 */
export interface CallHeaders {
  readonly principal: Principal | undefined;
  readonly requestId: string | undefined;
  readonly trace: Readonly<Record<string, string>>;
}

/** The headers of a call made from `ctx`. */
export function callHeaders(principal: Principal | undefined, requestId: string | undefined, ctx: Context): CallHeaders {
  const trace: Record<string, string> = {};
  propagation.inject(ctx, trace);
  return { principal, requestId, trace };
}

/** The context a server continues the caller's trace in. */
export function callerContext(headers: CallHeaders): Context {
  return propagation.extract(context.active(), headers.trace);
}

export function toMetadata(headers: CallHeaders): Metadata {
  const metadata = new Metadata();
  if (headers.principal) metadata.set(PRINCIPAL_KEY, Buffer.from(Principal.encode(headers.principal).finish()));
  if (headers.requestId) metadata.set(REQUEST_ID_KEY, headers.requestId);
  for (const [key, value] of Object.entries(headers.trace)) metadata.set(key, value);
  return metadata;
}

export function fromMetadata(metadata: Metadata): CallHeaders {
  const trace: Record<string, string> = {};
  for (const field of propagation.fields()) {
    const value = textOf(metadata, field);
    if (value !== undefined) trace[field] = value;
  }
  return { principal: readPrincipal(metadata), requestId: textOf(metadata, REQUEST_ID_KEY), trace };
}

/** The principal a call's metadata carries (`x-principal-bin`), as a server reads it. */
function readPrincipal(metadata: Metadata): Principal | undefined {
  const [value] = metadata.get(PRINCIPAL_KEY);
  if (!(value instanceof Buffer)) return undefined;
  return Principal.decode(value);
}

function textOf(metadata: Metadata, key: string): string | undefined {
  const [value] = metadata.get(key);
  return typeof value === 'string' ? value : undefined;
}
