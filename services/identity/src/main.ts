import { runService } from '@agent-platform/kit/run-service';
import { buildIdentityService, loadIdentityConfig } from './service.js';

await runService({
  name: 'identity',
  loadConfig: () => loadIdentityConfig(process.env, { requireNats: true }),
  build: buildIdentityService,
});
