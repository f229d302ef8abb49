import { runService } from '@agent-platform/kit/run-service';
import { buildAgentMemoryService, loadAgentMemoryConfig } from './service.js';

await runService({
  name: 'agent-memory',
  loadConfig: () => loadAgentMemoryConfig(process.env, { requireNats: true }),
  build: buildAgentMemoryService,
  // The service's own stop is bounded (gRPC drain, relay, index save, pool), and so is the bus's close.
  shutdownDelayMs: 20_000,
});
