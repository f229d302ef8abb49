import { type Metadata } from '@grpc/grpc-js';
import { Principal } from '@agent-platform/proto/common/v1';
import { context, propagation, type Context } from '@opentelemetry/api';

export type { Principal } from '@agent-platform/proto/common/v1';
export { Principal_Kind as PrincipalKind } from '@agent-platform/proto/common/v1';

export const PRINCIPAL_KEY = 'x-principal-bin';
export const REQUEST_ID_KEY = 'x-request-id';

export function writePrincipal(metadata: Metadata, principal: Principal): void {
  metadata.set(PRINCIPAL_KEY, Buffer.from(Principal.encode(principal).finish()));
}

export function readPrincipal(metadata: Metadata): Principal | undefined {
  const [value] = metadata.get(PRINCIPAL_KEY);
  if (!(value instanceof Buffer)) return undefined;
  return Principal.decode(value);
}

export function readRequestId(metadata: Metadata): string | undefined {
  const [value] = metadata.get(REQUEST_ID_KEY);
  return typeof value === 'string' ? value : undefined;
}

/** Writes W3C trace context (`traceparent`, `tracestate`) of `ctx` into call metadata. */
export function injectTraceContext(metadata: Metadata, ctx: Context = context.active()): void {
  propagation.inject(ctx, metadata, {
    set: (carrier, key, value) => carrier.set(key, value),
  });
}

export function extractTraceContext(metadata: Metadata): Context {
  return propagation.extract(context.active(), metadata, {
    get: (carrier, key) => {
      const [value] = carrier.get(key);
      return typeof value === 'string' ? value : undefined;
    },
    keys: (carrier) => Object.keys(carrier.getMap()),
  });
}
