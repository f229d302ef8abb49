import { DomainError } from '@agent-platform/kit';
import type { FastifyInstance, FastifyPluginCallback, FastifyReply, FastifyRequest } from 'fastify';
import { bearerCredential, requestedTenant } from '../../../auth/credentials.js';
import { authorize, policyFor, type RoutePolicy } from '../../../auth/policy.js';
import { impliedErrors, withImpliedErrors } from '../../../http/error-responses.js';
import type { AuthenticatedPrincipal } from '../../../auth/principal.js';

/**
 * What the API's mount (routes/api.ts) tells these hooks. autoload registers an autohooks file
 * without options, so the mount decorates its scope with them (`API_HOOK_OPTIONS`).
 */
export interface ApiHookOptions {
  /** The mount's prefix, /api/v1 or /v1: the policy table's paths are relative to it. */
  prefix: string;
  /** False for the /v1 alias: same operations, left out of the OpenAPI document. */
  documented: boolean;
}

/** The name of the mount's decorator holding its `ApiHookOptions`. */
export const API_HOOK_OPTIONS = 'apiHookOptions';

/** A route's key in the policy table: its URL below the mount's prefix, without a trailing slash. */
export function routeKeyPath(url: string, prefix: string): string {
  const path = url.slice(prefix.length);
  return path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
}

/**
 * The API's hooks (fastify/demo's autohooks): @fastify/autoload applies this file to every folder
 * below api/v1 (`cascadeHooks`), in the scope of the folder's routes. Each route gets its row of
 * the policy table when registered, and every request is authenticated, rate limited and
 * authorised by that row before its body is even read.
 */
const autohooks: FastifyPluginCallback = (app, _options, done) => {
  apiHooks(app, app.getDecorator<ApiHookOptions>(API_HOOK_OPTIONS));
  done();
};

export default autohooks;

/**
 * The hooks themselves, on the routes of `app`'s scope. A route without a row gets no policy and
 * fails closed on every request; the mount refuses to start with one (routes/api.ts).
 */
export function apiHooks(app: FastifyInstance, options: ApiHookOptions): void {
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const path = routeKeyPath(route.url, options.prefix);
    // A HEAD route is GET's twin (when Fastify exposes them) and shares its row.
    const policies = methods.map((method) => policyFor(method === 'HEAD' ? 'GET' : method, path));
    const policy = policies[0];
    if (!policy || policies.some((other) => other !== policy)) return;
    route.config = { ...route.config, policy };
    route.schema = {
      ...route.schema,
      security: securityOf(policy),
      response: withImpliedErrors(route.schema?.response as Record<string, unknown> | undefined, impliedErrors({ methods, schema: route.schema }, policy)),
      ...(options.documented ? {} : { hide: true }),
    };
  });

  app.addHook('onRequest', async (request, reply) => {
    const policy = request.routeOptions.config.policy;
    if (!policy) throw new Error(`Route ${request.routeOptions.url ?? ''} has no policy`);
    await guard(request, reply, policy);
  });
}

/**
 * The OpenAPI security of a policy row: none, an access token, or an access token or an API key
 * (bearerAuth, apiKeyAuth: swagger.ts). An API key's requirement lists the scope it must hold, as
 * OpenAPI 3.1 allows for schemes other than OAuth.
 */
export function securityOf(policy: RoutePolicy): Record<string, string[]>[] {
  if (policy.auth === 'none') return [];
  if (policy.auth === 'user') return [{ bearerAuth: [] }];
  return [{ bearerAuth: [] }, { apiKeyAuth: policy.scope ? [policy.scope] : [] }];
}

async function guard(request: FastifyRequest, reply: FastifyReply, policy: RoutePolicy): Promise<void> {
  const { rateLimiter, principals } = request.server;
  if (policy.auth === 'none') {
    const decision = await rateLimiter.forClientIp(request.ip);
    reply.headers(decision.headers);
    if (decision.error) throw decision.error;
    return;
  }
  const credential = bearerCredential(request.headers.authorization);
  const params = request.params as Record<string, unknown> | undefined;
  const query = request.query as Record<string, unknown> | undefined;
  const tenant = requestedTenant(params?.['tenant_id'], query?.['tenant_id']);
  let principal: AuthenticatedPrincipal;
  try {
    principal = await principals.resolve(credential, tenant, request.id);
  } catch (error) {
    // A valid credential asking for a tenant it may not use: still counted, against its own
    // tenant, so probing tenant ids is rate limited and the 403 carries the headers.
    if (tenant !== undefined && error instanceof DomainError && error.code === 'forbidden') {
      const home = await principals.resolve(credential, undefined, request.id);
      await countRequest(request, reply, home);
    }
    throw error;
  }
  request.principal = principal;
  await countRequest(request, reply, principal);
  authorize(principal, policy);
}

async function countRequest(request: FastifyRequest, reply: FastifyReply, principal: AuthenticatedPrincipal): Promise<void> {
  const decision = await request.server.rateLimiter.forTenant(principal.tenantId, principal.plan);
  reply.headers(decision.headers);
  if (decision.error) throw decision.error;
}
