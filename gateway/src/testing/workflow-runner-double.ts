import { createLogger } from '@agent-platform/kit';
import { GrpcServer } from '@agent-platform/kit/grpc';

/**
 * The workflow-runner as the gateway's unit tests need it: a gRPC server that answers health
 * checks. The workflow routes are tested against the real service, end to end (test/e2e).
 */
export class WorkflowRunnerDouble {
  private readonly server = new GrpcServer({ logger: createLogger({ service: 'workflow-runner-double', level: 'silent' }) });

  async start(): Promise<string> {
    const port = await this.server.listen('127.0.0.1', 0);
    return `127.0.0.1:${port}`;
  }

  stop(): Promise<void> {
    return this.server.stop(1_000);
  }
}
