import type { ServerWritableStream, UntypedServiceImplementation } from '@grpc/grpc-js';
import { DomainError } from '../errors.js';
import {
  HealthCheckResponse_ServingStatus as ServingStatus,
  type HealthCheckRequest,
  type HealthCheckResponse,
  type HealthServer,
} from '@agent-platform/proto/grpc-health/v1';
import type { Outcome } from './in-process.js';
import { toGrpcStatus } from './status.js';

export { HealthCheckResponse_ServingStatus as ServingStatus } from '@agent-platform/proto/grpc-health/v1';

/**
 * grpc.health.v1 for one server. The empty service name stands for the whole server; Kubernetes
 * probes ask for it. A server is NOT_SERVING until `start()` marks it SERVING, and again while it
 * drains on shutdown.
 */
export class HealthRegistry {
  private readonly statuses = new Map<string, ServingStatus>([['', ServingStatus.NOT_SERVING]]);
  private readonly watchers = new Set<{ service: string; stream: ServerWritableStream<HealthCheckRequest, HealthCheckResponse> }>();

  set(service: string, status: ServingStatus): void {
    this.statuses.set(service, status);
    for (const watcher of this.watchers) {
      if (watcher.service === service) watcher.stream.write({ status });
    }
  }

  /** Sets every registered service, and the server as a whole, at once. */
  setAll(status: ServingStatus): void {
    for (const service of this.statuses.keys()) this.set(service, status);
  }

  get(service: string): ServingStatus | undefined {
    return this.statuses.get(service);
  }

  /** Check's answer, or not_found for a service this server does not have. */
  check(request: HealthCheckRequest): Outcome<HealthCheckResponse> {
    const status = this.statuses.get(request.service);
    if (status === undefined) return { ok: false, status: toGrpcStatus(DomainError.notFound(`Service ${request.service}`)) };
    return { ok: true, value: { status } };
  }

  implementation(): HealthServer & UntypedServiceImplementation {
    return {
      check: (call, callback) => {
        const outcome = this.check(call.request);
        if (outcome.ok) callback(null, outcome.value);
        else callback(outcome.status);
      },
      watch: (call) => {
        const service = call.request.service;
        const watcher = { service, stream: call };
        this.watchers.add(watcher);
        call.write({ status: this.statuses.get(service) ?? ServingStatus.SERVICE_UNKNOWN });
        call.on('cancelled', () => this.watchers.delete(watcher));
      },
    };
  }

  /** Ends every Watch stream so a graceful shutdown is not held open by probes. */
  closeWatchers(): void {
    for (const watcher of this.watchers) watcher.stream.end();
    this.watchers.clear();
  }
}
