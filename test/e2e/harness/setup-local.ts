import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { COMMON_ENV, startLocalPlatformProcess } from './processes.js';
import { startSmtpPeer } from '@agent-platform/workflow-runner/testing';

/** The all-in-one launcher, exactly as `pnpm start` runs it, on a fresh data directory. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dataDir = await mkdtemp(join(tmpdir(), 'agent-platform-e2e-'));
  const smtp = await startSmtpPeer();
  const platform = await startLocalPlatformProcess({ dataDir, env: { ...COMMON_ENV, ...smtp.env } });
  project.provide('baseUrl', platform.baseUrl);
  project.provide('mode', 'local');
  project.provide('mailDir', smtp.mailDir);
  return async () => {
    const code = await platform.stop();
    await smtp.close();
    await rm(dataDir, { recursive: true, force: true });
    if (code !== 0) throw new Error(`the all-in-one platform did not stop cleanly (exit ${code}):\n${platform.output()}`);
  };
}
