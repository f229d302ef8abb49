import { ServingStatus } from '@agent-platform/kit/grpc';
import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ErrorSchema } from '../http/schemas.js';

const PROBE_TIMEOUT_MS = 1_000;

const Ready = z.object({
  status: z.literal('ready'),
  checks: z.record(z.string(), z.enum(['ok', 'not_configured'])),
});

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Probes, outside /api/v1 and unauthenticated: /healthz = the process lives; /readyz = it can serve. */
const healthRoutes: FastifyPluginCallbackZod = (app, _options, done) => {
  app.get(
    '/healthz',
    {
      schema: { tags: ['operations'], summary: 'Liveness: the process is up', response: { 200: z.object({ status: z.literal('ok') }) } },
    },
    () => ({ status: 'ok' as const }),
  );

  app.get(
    '/readyz',
    {
      schema: {
        tags: ['operations'],
        summary: 'Readiness: identity answers grpc.health.v1 and Redis (when configured) answers PING',
        response: { 200: Ready, 503: ErrorSchema },
      },
    },
    async (_request, reply) => {
      const failures: { field: string; message: string }[] = [];
      const checks: Record<string, 'ok' | 'not_configured'> = {};
      const identity = app.identity.health
        .check({ service: '' }, { deadlineMs: PROBE_TIMEOUT_MS })
        .then((answer) => {
          if (answer.status !== ServingStatus.SERVING) throw new Error('not serving');
          checks['identity'] = 'ok';
        })
        .catch(() => failures.push({ field: 'identity', message: 'The identity service is unreachable or not serving.' }));
      const redis = app.redis
        ? withTimeout(app.redis.ping(), PROBE_TIMEOUT_MS)
            .then(() => {
              checks['redis'] = 'ok';
            })
            .catch(() => failures.push({ field: 'redis', message: 'Redis does not answer.' }))
        : Promise.resolve().then(() => {
            checks['redis'] = 'not_configured';
          });
      await Promise.all([identity, redis]);
      if (failures.length > 0) {
        return reply.code(503).send({ error: 'service_unavailable', message: 'Not ready.', details: failures });
      }
      return reply.code(200).send({ status: 'ready', checks });
    },
  );
  done();
};

export default healthRoutes;
