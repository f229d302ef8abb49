import type { AddressInfo } from 'node:net';
import { drainFrom, HttpDrain, type Drain, type Logger } from '@agent-platform/kit';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import gatewayApp, { type BackendTransports } from './app.js';
import type { GatewayConfig } from './config.js';
import { sendError } from './http/errors.js';
import { lazyRequestLogger } from './http/request-logger.js';
import { requestIdOf } from './plugins/app/request-context.js';
import type { MetricsHandler } from './routes/metrics.js';

export { loadGatewayConfig, type GatewayConfig } from './config.js';
export { POLICIES, type RoutePolicy } from './auth/policy.js';
export type { BackendTransports } from './app.js';
export type { MetricsHandler } from './routes/metrics.js';

export interface GatewayDeps {
  logger: Logger;
  backends?: BackendTransports;
  /** The clock that token and key expiry are judged by (milliseconds since the epoch); tests move it. */
  now?: () => number;
  /** Serves `/metrics` on the gateway's own port: the all-in-one launcher passes its telemetry's. */
  metrics?: MetricsHandler;
}

export interface Gateway {
  app: FastifyInstance;
  start(): Promise<{ url: string }>;
  /** Drains (decisions §18.3): by SHUTDOWN_DELAY_MS and SHUTDOWN_GRACE_MS unless told otherwise. */
  stop(drain?: Drain): Promise<void>;
}

/**
 * Builds the gateway from its configuration (main.ts, the local launcher and the tests call this).
 * `backends` are the all-in-one mode's in-process transports to the services.
 */
export async function buildGateway(config: GatewayConfig, deps: GatewayDeps): Promise<Gateway> {
  // kit's pino Logger, seen as Fastify's base logger so the instance keeps its default generics.
  const loggerInstance: FastifyBaseLogger = deps.logger;
  const app = Fastify({
    loggerInstance,
    genReqId: requestIdOf,
    bodyLimit: config.BODY_LIMIT_BYTES,
    trustProxy: config.TRUST_PROXY,
    exposeHeadRoutes: false,
    // One access-log line per request (request-context's onResponse) instead of Fastify's two:
    // at `info` the second line cost a fifth of the throughput of an authenticated read.
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory: lazyRequestLogger,
    // Draining serves whatever still arrives (HttpDrain): a 503 for closing would fail a request
    // that a load balancer sent before it saw readiness fail.
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    // Router-level failures (a malformed URL) get the same flat body as everything else.
    frameworkErrors: (error, request, reply) => {
      reply.header('x-request-id', request.id);
      sendError(error, request, reply, config.BODY_LIMIT_BYTES);
    },
  });
  const drainer = new HttpDrain(app.server);
  app.decorate('draining', () => drainer.draining);
  await app.register(gatewayApp, { config, backends: deps.backends, now: deps.now ?? Date.now, metrics: deps.metrics });
  await app.ready();

  return {
    app,
    async start() {
      // Identity may start after the gateway: tokens then fetch the key set on first use.
      await app.accessTokens.refresh().catch((error: unknown) => app.log.warn({ err: error }, 'JWKS not fetched at start; will retry on use'));
      await app.listen({ port: config.PORT, host: config.HOST });
      const { port } = app.server.address() as AddressInfo;
      const host = config.HOST === '0.0.0.0' || config.HOST === '::' ? 'localhost' : config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST;
      return { url: `http://${host}:${port}` };
    },
    async stop(drain = drainFrom(config)) {
      if (!(await drainer.drain(drain, () => app.close()))) {
        app.log.warn({ graceMs: drain.graceMs }, 'gateway did not close in time; dropping connections');
        app.server.closeAllConnections();
      }
    },
  };
}
