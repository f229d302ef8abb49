import { runService } from '@agent-platform/kit/run-service';
import { buildWorkflowRunnerService, loadWorkflowRunnerConfig } from './service.js';

await runService({
  name: 'workflow-runner',
  loadConfig: () => loadWorkflowRunnerConfig(process.env, { requireNats: true }),
  build: buildWorkflowRunnerService,
});
