import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { COMMON_ENV, freePort, httpOk, startNode, waitUntil } from './processes.js';

/** The all-in-one launcher, exactly as `pnpm start` runs it, on a fresh data directory. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dataDir = await mkdtemp(join(tmpdir(), 'agent-platform-e2e-'));
  const port = await freePort();
  const platform = startNode('deploy/local/src/main.ts', {
    ...COMMON_ENV,
    DATA_DIR: dataDir,
    PORT: String(port),
    EMBEDDED_PG_PORT: String(await freePort()),
    IDENTITY_GRPC_PORT: '0',
    WEBHOOK_DISPATCHER_GRPC_PORT: '0',
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  await waitUntil('the all-in-one platform', platform, () => httpOk(`${baseUrl}/readyz`), 120_000);
  project.provide('baseUrl', baseUrl);
  project.provide('mode', 'local');
  return async () => {
    const code = await platform.stop();
    await rm(dataDir, { recursive: true, force: true });
    if (code !== 0) throw new Error(`the all-in-one platform did not stop cleanly (exit ${code}):\n${platform.output()}`);
  };
}
