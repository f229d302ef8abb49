import { DomainError, type InProcessHttp } from '@agent-platform/kit';
import type { ChannelTransport } from '@agent-platform/kit/grpc';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { serializerCompiler } from 'fastify-type-provider-zod';
import type { GatewayConfig } from './config.js';
import { bodyTooLarge, sendError } from './http/errors.js';
import { checkUrl, validatorCompiler } from './http/validation.js';
import agentMemory from './plugins/app/agent-memory.js';
import authentication from './plugins/app/authentication.js';
import identity from './plugins/app/identity.js';
import rateLimits from './plugins/app/rate-limits.js';
import requestContext from './plugins/app/request-context.js';
import stores from './plugins/app/stores.js';
import webhooks from './plugins/app/webhooks.js';
import workflowRunner from './plugins/app/workflow-runner.js';
import configPlugin from './plugins/external/config.js';
import redis from './plugins/external/redis.js';
import swagger from './plugins/external/swagger.js';
import api from './routes/api.js';
import consoleRoutes, { defaultConsoleDir } from './routes/console.js';
import healthRoutes from './routes/health.js';
import hookRoutes from './routes/hooks.js';
import metricsRoute, { type MetricsHandler } from './routes/metrics.js';
import openapiRoute from './routes/openapi.js';
import './types.js';

export interface GatewayAppOptions {
  config: GatewayConfig;
  backends?: BackendTransports | undefined;
  /** Milliseconds since the epoch, for token and API-key expiry and the rate-limit windows. */
  now: () => number;
  /** Serves `/metrics` on the gateway's port (the all-in-one mode); without it there is no such route. */
  metrics?: MetricsHandler | undefined;
}

/** The all-in-one launcher's in-process transports; a backend without one is called at its address. */
export interface BackendTransports {
  identity?: ChannelTransport;
  agentMemory?: ChannelTransport;
  webhookDispatcher?: ChannelTransport;
  workflowRunner?: ChannelTransport;
  /** The workflow-runner's inbound-webhook ingress, for `/hooks` (else WORKFLOW_INGRESS_URL). */
  workflowIngress?: InProcessHttp;
}

/** A multipart/form-data body: what only the routes that stream forms take past BODY_LIMIT_BYTES. */
function isForm(request: FastifyRequest): boolean {
  return /^multipart\/form-data\b/i.test(request.headers['content-type'] ?? '');
}

/** Bodies up to this many times the limit are drained before their 413; larger ones are cut off. */
const OVERSIZED_BODY_DRAIN_FACTOR = 8;

/**
 * The gateway as one Fastify plugin (fastify/demo's layout): external plugins (config, Redis,
 * OpenAPI), then the app's own (request context, the identity, agent-memory, webhook-dispatcher and
 * workflow-runner clients, stores, authentication, rate limits), then the routes. fastify-plugin lets its error handlers
 * reach the root instance.
 */
const gatewayApp: FastifyPluginAsync<GatewayAppOptions> = async (app, options) => {
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  // JSON only (login adds forms in its own scope); anything else is 400 invalid_request.
  app.removeContentTypeParser('text/plain');

  await app.register(configPlugin, { config: options.config });
  await app.register(redis);
  await app.register(swagger);

  await app.register(requestContext);
  // Before authentication and routing decide anything: a NUL in the URL is refused outright.
  app.addHook('onRequest', (request, _reply, next) => {
    try {
      checkUrl(request.url);
      next();
    } catch (error) {
      next(error as Error);
    }
  });
  // A body declared over the route's limit is read and dropped before the 413, up to a bound.
  // Fastify would answer at once and close the connection mid-upload, and a client that does not
  // wait for 100 Continue (fetch) then often sees EPIPE or a reset, not the answer.
  app.addHook('preParsing', async (request, _reply, payload) => {
    const declared = Number(request.headers['content-length']);
    // A route that streams forms (a document's file, decisions §17) reads larger ones; every other
    // body keeps the route's limit, BODY_LIMIT_BYTES.
    const formLimit = isForm(request) ? request.routeOptions.config.formBodyLimit : undefined;
    const limit = formLimit ?? request.routeOptions.bodyLimit ?? options.config.BODY_LIMIT_BYTES;
    if (!(declared > limit) || declared > limit * OVERSIZED_BODY_DRAIN_FACTOR) return payload;
    for await (const chunk of payload) void chunk;
    throw bodyTooLarge(limit);
  });
  const backends = options.backends ?? {};
  await app.register(identity, { transport: backends.identity });
  await app.register(agentMemory, { transport: backends.agentMemory });
  await app.register(webhooks, { transport: backends.webhookDispatcher });
  await app.register(workflowRunner, { transport: backends.workflowRunner });
  await app.register(stores, { now: options.now });
  await app.register(authentication, { now: options.now });
  await app.register(rateLimits, { now: options.now });

  const bodyLimit = options.config.BODY_LIMIT_BYTES;
  app.setErrorHandler((error, request, reply) => sendError(error, request, reply, bodyLimit));
  app.setNotFoundHandler((request, reply) => sendError(new DomainError('not_found', 'No such route.'), request, reply, bodyLimit));

  await app.register(healthRoutes);
  if (options.metrics) await app.register(metricsRoute, { handler: options.metrics });
  await app.register(openapiRoute);
  await app.register(consoleRoutes, { root: options.config.CONSOLE_DIR ?? defaultConsoleDir(), bodyLimit });
  await app.register(hookRoutes, { ingress: backends.workflowIngress });
  await app.register(api, { prefix: '/api/v1', documented: true });
  await app.register(api, { prefix: '/v1', documented: false });
};

export default fp(gatewayApp, { name: 'gateway-app' });
