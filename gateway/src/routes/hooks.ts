import { DomainError, isId, withoutSocketHeaders, type InProcessHttp } from '@agent-platform/kit';
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

export interface HookRoutesOptions {
  /** The ingress in this process (the all-in-one mode); without it, WORKFLOW_INGRESS_URL over HTTP. */
  ingress?: InProcessHttp | undefined;
}

/**
 * `/hooks/*`: inbound workflow webhooks (decisions §7), forwarded untouched — method, headers, raw
 * body — to the workflow-runner's ingress, which answers them. Before forwarding, the request is
 * counted against the plan limits of the tenant that owns the workflow (429 with the usual
 * headers); an address of no active workflow is 404 here already. POST only: other methods are 404.
 */
const hookRoutes: FastifyPluginAsync<HookRoutesOptions> = async (app, options) => {
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

  const unavailable = (reply: FastifyReply, error: unknown) => {
    reply.request.log.warn({ err: error }, 'the workflow-runner ingress did not answer');
    // Its text is replaced by the fixed text of every 503 (http/errors.ts).
    sendError(new DomainError('service_unavailable', 'The workflow-runner ingress did not answer.'), reply.request, reply, bodyLimit);
  };

  const { ingress } = options;
  if (ingress) {
    // The same exchange as the proxy's below, handed to the ingress without a socket.
    const forward = async (request: FastifyRequest, reply: FastifyReply) => {
      let answer;
      try {
        answer = await ingress({ method: request.method, url: request.url, headers: request.headers, body: Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0) });
      } catch (error) {
        unavailable(reply, error);
        return reply;
      }
      return reply.code(answer.statusCode).headers(withoutSocketHeaders(answer.headers)).send(answer.body);
    };
    const preHandler = (request: FastifyRequest, reply: FastifyReply) => countAgainstOwner(request, reply);
    app.post('/hooks', { preHandler }, forward);
    app.post('/hooks/*', { preHandler }, forward);
    return;
  }

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
      onError: (reply, { error }) => unavailable(reply as FastifyReply, error),
    },
  });
};

export default hookRoutes;
