import type { sendUnaryData, Server, ServerUnaryCall, ServerWritableStream, UntypedServiceImplementation } from '@grpc/grpc-js';
import { HealthImplementation, service as healthService, type ServingStatus as HealthStatus } from 'grpc-health-check';
import type { Outcome } from './in-process.js';
import type { AnyMethod } from './types.js';

export { HealthCheckResponse_ServingStatus as ServingStatus } from '@agent-platform/proto/grpc-health/v1';
export type { HealthStatus };

export const HEALTH_SERVICE = 'grpc.health.v1.Health';

/**
 * grpc.health.v1 Check as grpc-health-check defines it, for the in-process path: its handler
 * answers statuses as names (`'SERVING'`), which this codec writes and ts-proto's reads back.
 */
export const HEALTH_CHECK_METHOD = healthService.Check as unknown as AnyMethod;

type CheckHandler = (call: Pick<ServerUnaryCall<unknown, unknown>, 'request'>, callback: sendUnaryData<unknown>) => void;

/**
 * grpc.health.v1 for one server, served by grpc-health-check's HealthImplementation, whose status
 * map is the one source of truth: calls off the socket reach it through the server, calls from
 * this process through `check()`, which runs the same Check handler. The empty service name stands
 * for the whole server; Kubernetes probes ask for it. A server is NOT_SERVING until it listens,
 * SERVING then, and NOT_SERVING again while it drains on shutdown.
 */
export class HealthRegistry {
  private readonly implementation = new HealthImplementation({ '': 'NOT_SERVING' });
  /** Names only, for setAll; their statuses live in the implementation. */
  private readonly services = new Set<string>(['']);
  private readonly watches = new Set<ServerWritableStream<unknown, unknown>>();
  private checkHandler: CheckHandler | undefined;

  set(service: string, status: HealthStatus): void {
    this.services.add(service);
    this.implementation.setStatus(service, status);
  }

  /** Sets every registered service, and the server as a whole, at once. */
  setAll(status: HealthStatus): void {
    for (const service of this.services) this.implementation.setStatus(service, status);
  }

  /**
   * Adds Check, Watch and List to `server`. Watch streams are noted on the way, so a shutdown can
   * end them; the library leaves them open for as long as the client keeps them.
   */
  addTo(server: Pick<Server, 'addService'>): void {
    this.implementation.addToServer({
      addService: (definition, handlers) => {
        const { check, watch } = handlers as unknown as { check: CheckHandler; watch: (call: ServerWritableStream<unknown, unknown>) => void };
        this.checkHandler = check;
        const tracked: UntypedServiceImplementation = {
          ...(handlers as UntypedServiceImplementation),
          watch: (call: ServerWritableStream<unknown, unknown>) => {
            this.watches.add(call);
            const forget = () => this.watches.delete(call);
            call.once('cancelled', forget);
            call.once('finish', forget);
            watch(call);
          },
        };
        server.addService(definition, tracked);
      },
    });
  }

  /** Check's answer for a call from this process: the library's own, not_found for an unknown service. */
  check(request: unknown): Promise<Outcome<unknown>> {
    const handler = this.checkHandler;
    if (!handler) throw new Error('HealthRegistry.check before addTo');
    return new Promise((resolve) =>
      handler({ request }, (error, value) => resolve(error ? { ok: false, status: error } : { ok: true, value })),
    );
  }

  /** Ends every Watch stream so a graceful shutdown is not held open by probes. */
  closeWatchers(): void {
    for (const call of this.watches) call.end();
    this.watches.clear();
  }
}
