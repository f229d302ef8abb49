import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

export { freePort } from '@agent-platform/kit/testing';

export interface RunningProcess {
  child: ChildProcess;
  /** Everything it printed so far, for failure messages. */
  output(): string;
  /** SIGINT, then SIGKILL after `graceMs`; resolves with the exit code (null if killed). */
  stop(graceMs?: number): Promise<number | null>;
}

/** Starts `node --import tsx <entry>` from the repository root with extra environment. */
export function startNode(entry: string, env: Record<string, string>): RunningProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', entry], {
    cwd: REPO_ROOT,
    env: { ...process.env, NODE_ENV: 'test', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    output: () => output,
    stop: async (graceMs = 15_000) => {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill('SIGINT');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

/** Polls until `probe` resolves true, the process dies, or `timeoutMs` passes. */
export async function waitUntil(what: string, running: RunningProcess, probe: () => Promise<boolean>, timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (running.child.exitCode !== null) {
      throw new Error(`${what} exited with ${running.child.exitCode}:\n${running.output()}`);
    }
    if (await probe().catch(() => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${what} was not ready within ${timeoutMs} ms:\n${running.output()}`);
}

export async function httpOk(url: string): Promise<boolean> {
  const response = await fetch(url);
  return response.ok;
}

/**
 * Settings both modes share: proxies are trusted so each test can act from its own client IP;
 * webhooks may target the tests' local receivers; retries come a second apart instead of minutes.
 */
export const COMMON_ENV: Record<string, string> = {
  LOG_LEVEL: 'warn',
  TRUST_PROXY: 'true',
  ALLOW_PRIVATE_NETWORK_URLS: 'true',
  WEBHOOK_RETRY_SCHEDULE: '0,1,1,1,1',
};
