/**
 * Loaded before a process's own code (`node --import @agent-platform/kit/telemetry/register …`),
 * so the instrumentations patch gRPC, pg, ioredis, http and Fastify as they are first imported.
 * ES modules are patched through import-in-the-middle's loader hook, told about exactly the
 * modules the instrumentations ask for, so every other import loads untouched.
 *
 * Settings come from the standard variables: OTEL_SERVICE_NAME (else the started package's name)
 * and OTEL_EXPORTER_OTLP_ENDPOINT. Where `/metrics` is served is the `main`'s to say, from its
 * configuration (startTelemetry): METRICS_PORT in the distributed mode, the gateway's port in the
 * all-in-one mode.
 */
import { readFileSync } from 'node:fs';
import { register } from 'node:module';
import { dirname, join } from 'node:path';
import { createAddHookMessageChannel } from 'import-in-the-middle';
import { startTelemetry } from './index.js';

const { registerOptions, waitForAllMessagesAcknowledged } = createAddHookMessageChannel();
register('import-in-the-middle/hook.mjs', import.meta.url, registerOptions);

await startTelemetry({
  serviceName: packageNameOf(process.argv[1]),
  otlpEndpoint: process.env.OTEL_EXPORTER_OTLP_ENDPOINT || undefined,
});
await waitForAllMessagesAcknowledged();

/** `identity` for …/services/identity/dist/main.js: the unscoped name of the entry's package. */
function packageNameOf(entry: string | undefined): string {
  for (let dir = entry ? dirname(entry) : process.cwd(); dir !== dirname(dir); dir = dirname(dir)) {
    try {
      const { name } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string };
      if (name) return name.replace(/^@[^/]+\//, '');
    } catch {
      // No package.json here; look further up.
    }
  }
  return 'agent-platform';
}
