import { withTimeout } from '@agent-platform/kit';
import { ServingStatus } from '@agent-platform/kit/grpc';
import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { errorResponses, genericErrorResponses, impliedErrors } from '../http/error-responses.js';
import type { HealthClient } from '../plugins/app/grpc-health.js';

const PROBE_TIMEOUT_MS = 1_000;

// No credential, no rate limit: only a malformed URL and the unexpected fail a probe.
const PROBE_ERRORS = genericErrorResponses(impliedErrors({ methods: ['GET'], schema: undefined }, undefined));

const Ready = z.object({
  status: z.literal('ready'),
  checks: z.record(z.string(), z.enum(['ok', 'not_configured'])),
});

type Check = 'ok' | 'not_configured';
type Failure = { field: string; message: string };

/**
 * A backend is asked this many times before it counts as not serving: each ask goes to its next
 * replica (round robin), and one replica draining (NOT_SERVING until its callers have moved on)
 * must not take every gateway out of the load balancer at once (decisions §18.3).
 */
const PROBE_ASKS = 3;

/** Asks a backend's grpc.health.v1 for the server as a whole (service ''): SERVING on any replica asked. */
async function serving(client: HealthClient): Promise<Check> {
  const deadline = Date.now() + PROBE_TIMEOUT_MS;
  for (let ask = 1; ; ask += 1) {
    const answer = await client.check({ service: '' }, { deadlineMs: Math.max(1, deadline - Date.now()) }).catch((error: unknown) => {
      if (ask >= PROBE_ASKS) throw error;
      return undefined;
    });
    if (answer?.status === ServingStatus.SERVING) return 'ok';
    if (ask >= PROBE_ASKS) throw new Error('not serving');
  }
}

/** Probes, outside /api/v1 and unauthenticated: /healthz = the process lives; /readyz = it can serve. */
const healthRoutes: FastifyPluginCallbackZod = (app, _options, done) => {
  app.get(
    '/healthz',
    {
      schema: {
        operationId: 'checkLiveness',
        tags: ['operations'],
        summary: 'Liveness: the process is up',
        security: [],
        response: { 200: z.object({ status: z.literal('ok') }), ...PROBE_ERRORS },
      },
    },
    () => ({ status: 'ok' as const }),
  );

  app.get(
    '/readyz',
    {
      schema: {
        operationId: 'checkReadiness',
        tags: ['operations'],
        summary: 'Readiness: every backend answers',
        security: [],
        description: [
          'Ready only when every backend answers: identity, agent-memory, webhook-dispatcher and workflow-runner report SERVING on',
          'grpc.health.v1, and Redis (when configured) answers PING. A gateway that cannot reach one of',
          'them would fail part of the API, so it leaves the load balancer until all are back. A 503',
          'names each backend that failed in `details[].field`, or `gateway` once this gateway is shutting down',
          '(it keeps serving meanwhile, for the load balancer to notice).',
        ].join(' '),
        response: {
          200: Ready,
          ...PROBE_ERRORS,
          ...errorResponses({ service_unavailable: 'Not ready: `details[].field` names each backend that failed.' }),
        },
      },
    },
    async (_request, reply) => {
      if (app.draining()) {
        return reply.code(503).send({ error: 'service_unavailable', message: 'Not ready.', details: [{ field: 'gateway', message: 'The gateway is shutting down.' }] });
      }
      const failures: Failure[] = [];
      const checks: Record<string, Check> = {};
      const probe = (name: string, run: () => Promise<Check>, message: string) =>
        run().then(
          (check) => {
            checks[name] = check;
          },
          () => failures.push({ field: name, message }),
        );
      const { redis } = app;
      await Promise.all([
        probe('identity', () => serving(app.identity.health), 'The identity service is unreachable or not serving.'),
        probe('agent-memory', () => serving(app.agentMemory.health), 'The agent-memory service is unreachable or not serving.'),
        probe('webhook-dispatcher', () => serving(app.webhooks.health), 'The webhook-dispatcher service is unreachable or not serving.'),
        probe('workflow-runner', () => serving(app.workflowRunner.health), 'The workflow-runner service is unreachable or not serving.'),
        probe('redis', () => (redis ? withTimeout(redis.ping(), PROBE_TIMEOUT_MS).then((): Check => 'ok') : Promise.resolve<Check>('not_configured')), 'Redis does not answer.'),
      ]);
      if (failures.length > 0) {
        return reply.code(503).send({ error: 'service_unavailable', message: 'Not ready.', details: failures });
      }
      return reply.code(200).send({ status: 'ready', checks });
    },
  );
  done();
};

export default healthRoutes;
