import type { Principal } from '@agent-platform/kit/grpc';
import type { RecordedCall, Upstream } from './upstream.js';

/** The last call of `method` (the proto's name, `GetCurrentUser`) the gateway made to `upstream`. */
export function lastCall(upstream: Upstream, method: string): RecordedCall | undefined {
  return upstream.callsOf(method).at(-1);
}

/** The principal the gateway forwarded with a call, as the service reads it. */
export function principalOf(call: RecordedCall | undefined): Principal | undefined {
  return call?.principal;
}
