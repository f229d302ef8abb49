import { runService } from '@agent-platform/kit/run-service';
import { buildIdentityService, loadIdentityConfig } from './service.js';

await runService({
  name: 'identity',
  loadConfig: () => loadIdentityConfig(process.env, { requireNats: true }),
  build: buildIdentityService,
  // The service's own stop is bounded (gRPC drain, relay, pool), and so is the bus's close.
  shutdownDelayMs: 15_000,
});
