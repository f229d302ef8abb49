import { context } from '@opentelemetry/api';
import { getRPCMetadata, RPCType } from '@opentelemetry/core';

/**
 * Names the route of the HTTP request being served (`/api/v1/agents/:agent_id`) for the HTTP
 * instrumentation, which puts it on its span (`http.route`) and on `http_server_request_duration`.
 * A Fastify server calls it from an onRequest hook; without the instrumentation it does nothing.
 */
export function nameHttpRoute(route: string | undefined): void {
  const metadata = getRPCMetadata(context.active());
  if (route !== undefined && metadata?.type === RPCType.HTTP) metadata.route = route;
}
