import { DomainError, isId } from '@agent-platform/kit';
import httpProxy from '@fastify/http-proxy';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { LRUCache } from 'lru-cache';
import { sendError } from '../http/errors.js';

interface InboundOwner {
  tenantId: string;
  plan: string;
}

/** Where the inbound address's owner is remembered: two gRPC calls saved per hook (seconds). */
const OWNER_TTL_MS = 5_000;

/**
 * `/hooks/*`: inbound workflow webhooks (decisions §7), forwarded untouched — method, headers, raw
 * body — to the workflow-runner's ingress, which answers them. Before forwarding, the request is
 * counted against the plan limits of the tenant that owns the workflow (429 with the usual
 * headers); an address of no active workflow is 404 here already. POST only: other methods are 404.
 */
const hookRoutes: FastifyPluginAsync = async (app) => {
  const owners = new LRUCache<string, InboundOwner>({ max: 10_000, ttl: OWNER_TTL_MS });
  const bodyLimit = app.config.BODY_LIMIT_BYTES;

  async function ownerOf(workflowId: string, request: FastifyRequest): Promise<InboundOwner> {
    const cached = owners.get(workflowId);
    if (cached) return cached;
    const { tenantId } = await app.workflowRunner.inbound.resolveInbound({ workflowId }, { requestId: request.id });
    const { plan } = await app.identity.auth.getTenantPlan({ tenantId }, { requestId: request.id });
    const owner = { tenantId, plan };
    owners.set(workflowId, owner);
    return owner;
  }

  async function countAgainstOwner(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    // /hooks/<workflow_id>[/<path>][?<query>]
    const workflowId = request.url.split(/[/?]/, 3)[2] ?? '';
    if (!isId('workflow', workflowId)) throw DomainError.notFound('Inbound webhook');
    const owner = await ownerOf(workflowId, request);
    const decision = await app.rateLimiter.forTenant(owner.tenantId, owner.plan);
    reply.headers(decision.headers);
    if (decision.error) throw decision.error;
  }

  // Outside the OpenAPI document: the address belongs to each workflow (its `webhook_url`), and
  // what it accepts is described in docs/api.md.
  app.addHook('onRoute', (route) => {
    route.schema = { ...route.schema, hide: true };
  });
  // The body is read here as raw bytes whatever its type (the gateway's body limit applies: 413),
  // and forwarded byte for byte; the runner parses it, so senders' signatures still verify.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

  await app.register(httpProxy, {
    upstream: app.config.WORKFLOW_INGRESS_URL,
    prefix: '/hooks',
    rewritePrefix: '/hooks',
    httpMethods: ['POST'],
    proxyPayloads: false,
    handler: (request, reply, destination, options) => {
      const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      return reply.from(destination, { ...options, body, contentType: request.headers['content-type'] ?? 'application/octet-stream' });
    },
    preHandler: (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => {
      countAgainstOwner(request, reply).then(() => done(), done);
    },
    replyOptions: {
      onError: (reply, { error }) => {
        reply.request.log.warn({ err: error }, 'the workflow-runner ingress did not answer');
        sendError(new DomainError('service_unavailable', 'Inbound webhooks are unavailable; retry later.'), reply.request as FastifyRequest, reply as FastifyReply, bodyLimit);
      },
    },
  });
};

export default hookRoutes;
