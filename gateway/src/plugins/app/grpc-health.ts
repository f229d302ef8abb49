import type { PromiseClient } from '@agent-platform/kit/grpc';
import { HealthService } from '@agent-platform/proto/grpc-health/v1';

/** grpc.health.v1 without Watch (it streams): readiness only asks Check, of every backend. */
export const HealthCheck = { check: HealthService.check };

export type HealthClient = PromiseClient<typeof HealthCheck>;
