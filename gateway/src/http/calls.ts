import { principalOf, type OutgoingCall } from '@agent-platform/kit/grpc';
import type { FastifyRequest } from 'fastify';

/** Call options for a service call made on behalf of the authenticated caller of `request`. */
export function callAs(request: FastifyRequest): OutgoingCall {
  if (!request.principal) throw new Error(`${request.method} ${request.routeOptions.url ?? ''} has no principal; is its policy 'none'?`);
  return { principal: principalOf(request.principal), requestId: request.id };
}

/** Call options for an unauthenticated call (registration, login, refresh). */
export function anonymousCall(request: FastifyRequest): OutgoingCall {
  return { requestId: request.id };
}
