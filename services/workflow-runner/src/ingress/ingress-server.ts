import { DomainError, errorBody, httpServerTelemetry, httpStatusOf, withoutSocketHeaders, type InProcessHttp, type Logger } from '@agent-platform/kit';
import { classifyDbError } from '@agent-platform/kit/db';
import Fastify, { type FastifyInstance } from 'fastify';
import type { InboundService } from './inbound.service.js';

export interface IngressOptions {
  inbound: InboundService;
  bodyLimitBytes: number;
  logger: Logger;
}

/** Where the gateway's `/hooks/*` lands (untouched: method, headers, raw body). */
export const INGRESS_PREFIX = '/hooks';

/** How long an idle connection to the ingress stays open, as advertised to its callers. */
const INGRESS_KEEP_ALIVE_MS = 5_000;

/**
 * The runner's small HTTP ingress for inbound webhooks. Bodies are read raw whatever their content
 * type and parsed here, so a sender's bytes reach the workflow as sent; answers follow decisions §2.
 */
export function buildIngress(options: IngressOptions): FastifyInstance {
  const app = Fastify({
    bodyLimit: options.bodyLimitBytes,
    logger: false,
    // Draining serves what still arrives (HttpDrain in service.ts), never a 503 for closing.
    return503OnClosing: false,
    // Node's default, not Fastify's 72 s (kept for cloud load balancers, which this has none of):
    // the gateway closes an idle connection 2 s before this, and a drain waits for that.
    keepAliveTimeout: INGRESS_KEEP_ALIVE_MS,
  });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
  app.addHook('onRequest', httpServerTelemetry.onRequest);
  app.addHook('onResponse', httpServerTelemetry.onResponse);

  const receive = async (request: { params: { workflow_id: string; '*'?: string }; body: unknown; query: unknown; headers: Record<string, string | string[] | undefined> }) => {
    const rest = request.params['*'];
    const started = await options.inbound.receive({
      workflowId: request.params.workflow_id,
      path: rest === undefined || rest === '' ? '' : `/${rest}`,
      body: Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0),
      query: request.query as Record<string, string | string[]>,
      headers: flatHeaders(request.headers),
    });
    return { execution_id: started.executionId, workflow_id: started.workflowId, status: 'running' };
  };

  app.post<{ Params: { workflow_id: string } }>(`${INGRESS_PREFIX}/:workflow_id`, async (request, reply) => reply.code(202).send(await receive(request)));
  app.post<{ Params: { workflow_id: string; '*': string } }>(`${INGRESS_PREFIX}/:workflow_id/*`, async (request, reply) => reply.code(202).send(await receive(request)));

  app.setNotFoundHandler((_request, reply) => reply.code(404).send(errorBody(DomainError.notFound('Inbound webhook'))));
  app.setErrorHandler((error: Error & { statusCode?: number; code?: string }, request, reply) => {
    const domain = domainErrorOf(error, options.bodyLimitBytes);
    if (!domain) options.logger.error({ err: error, url: request.url }, 'inbound webhook failed');
    const answer = domain ?? new DomainError('internal_error', 'Something went wrong.');
    return reply.code(httpStatusOf(answer.code)).send(errorBody(answer));
  });
  return app;
}

/** What a failed hook answers; undefined for the unexpected (500, logged). */
function domainErrorOf(error: Error & { statusCode?: number; code?: string }, bodyLimitBytes: number): DomainError | undefined {
  if (error instanceof DomainError) return error;
  // A database away (restarting, failing over): 503 for the sender to retry, as the gRPC servers answer.
  const unavailable = classifyDbError(error);
  if (unavailable) return unavailable;
  if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return new DomainError('payload_too_large', `The body exceeds ${bodyLimitBytes} bytes.`);
  if (error.statusCode !== undefined && error.statusCode < 500) return new DomainError('invalid_request', 'The request could not be read.');
  return undefined;
}

/** Header values as expressions see them: one string per header (repeated ones joined). */
function flatHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
  return flat;
}

/**
 * The ingress for a caller in this process (the all-in-one gateway): the request goes through the
 * ingress's own routes, parsers and error answers by `inject`, with no socket between. Taken while
 * `serving()` says so; otherwise it rejects, as a closed port refuses.
 */
export function inProcessIngress(app: FastifyInstance, serving: () => boolean): InProcessHttp {
  return async (request) => {
    if (!serving()) throw new Error('The workflow-runner ingress is not serving.');
    // light-my-request sets the length of the body it is given.
    const answer = await app.inject({ method: request.method as 'POST', url: request.url, headers: withoutSocketHeaders(request.headers), payload: request.body });
    return { statusCode: answer.statusCode, headers: answer.headers, body: answer.rawPayload };
  };
}
