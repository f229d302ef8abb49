import { runService } from '@agent-platform/kit/run-service';
import { buildWorkflowRunnerService, loadWorkflowRunnerConfig } from './service.js';

await runService({
  name: 'workflow-runner',
  loadConfig: () => loadWorkflowRunnerConfig(process.env, { requireNats: true }),
  build: buildWorkflowRunnerService,
  // Executions in flight get 10 s, then gRPC, the relay and the pool their own bounds.
  shutdownDelayMs: 30_000,
});
