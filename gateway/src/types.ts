import type { Redis } from 'ioredis';
import type { AuthCache } from './adapters/auth-cache.js';
import type { RateLimitStore } from './adapters/rate-limit-store.js';
import type { AccessTokenVerifier } from './auth/access-tokens.js';
import type { RoutePolicy } from './auth/policy.js';
import type { AuthenticatedPrincipal } from './auth/principal.js';
import type { PrincipalResolver } from './auth/principal-resolver.js';
import type { GatewayConfig } from './config.js';
import type { RateLimiter } from './limits/rate-limiter.js';
import type { AgentMemoryClients } from './plugins/app/agent-memory.js';
import type { IdentityClients } from './plugins/app/identity.js';
import type { WebhookClients } from './plugins/app/webhooks.js';
import type { WorkflowRunnerClients } from './plugins/app/workflow-runner.js';

// The decorators of plugins/external and plugins/app, typed once for every route.
declare module 'fastify' {
  interface FastifyInstance {
    config: GatewayConfig;
    /** null when REDIS_URL is unset (the in-process adapters are used). */
    redis: Redis | null;
    identity: IdentityClients;
    agentMemory: AgentMemoryClients;
    webhooks: WebhookClients;
    workflowRunner: WorkflowRunnerClients;
    rateLimitStore: RateLimitStore;
    authCache: AuthCache;
    accessTokens: AccessTokenVerifier;
    principals: PrincipalResolver;
    rateLimiter: RateLimiter;
    /** True once the gateway drains: /readyz fails, so load balancers stop sending. */
    draining: () => boolean;
  }

  interface FastifyRequest {
    /** Set by the API's authentication hook; null on open routes. */
    principal: AuthenticatedPrincipal | null;
  }

  interface FastifyContextConfig {
    /** The route's row of the policy table, attached when the route is registered. */
    policy?: RoutePolicy;
    /** A route that streams multipart/form-data uploads: the largest form it reads (other bodies keep BODY_LIMIT_BYTES). */
    formBodyLimit?: number;
  }
}

export {};
