import { runService } from '@agent-platform/kit/run-service';
import { buildAgentMemoryService, loadAgentMemoryConfig } from './service.js';

await runService({
  name: 'agent-memory',
  loadConfig: () => loadAgentMemoryConfig(process.env, { requireNats: true }),
  build: buildAgentMemoryService,
});
