import { HealthCheckResponse_ServingStatus, HealthService } from '@agent-platform/proto/grpc-health/v1';
import { GrpcChannel } from './client.js';

/**
 * Whether the server at `target` answers grpc.health.v1 Check for itself as a whole with SERVING:
 * what a Kubernetes `grpc:` readiness probe asks. Any failure (refused, timed out, draining) is false.
 */
export async function servesAt(target: string, deadlineMs = 1_000): Promise<boolean> {
  const channel = new GrpcChannel(target, { defaultDeadlineMs: deadlineMs });
  try {
    const { status } = await channel.client({ check: HealthService.check }).check({ service: '' });
    return status === HealthCheckResponse_ServingStatus.SERVING;
  } catch {
    return false;
  } finally {
    channel.close();
  }
}
