import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

import { freePort } from '@agent-platform/kit/testing';
import { clusterDirOf, postmasterPid } from '@agent-platform/local/postmaster';

export { freePort };

export interface RunningProcess {
  child: ChildProcess;
  /** Everything it printed so far, for failure messages. */
  output(): string;
  /** SIGINT, then SIGKILL after `graceMs`; resolves with the exit code (null if killed). */
  stop(graceMs?: number): Promise<number | null>;
}

/**
 * What `pnpm build` makes: every service and the gateway compiled to JavaScript, and the console the
 * gateway serves. Cheap when nothing changed (tsc is incremental; the console is rebuilt only when
 * a source changed).
 */
export function buildServices(): void {
  execFileSync(process.execPath, [createRequire(import.meta.url).resolve('typescript/bin/tsc'), '-b', 'tsconfig.build.json'], { cwd: REPO_ROOT, stdio: 'inherit' });
  buildConsole();
}

/** The console the gateway serves, built from the current sources (`--if-stale`: only when one changed). */
export function buildConsole(): void {
  execFileSync(process.execPath, ['--import', 'tsx', 'scripts/build.ts', '--if-stale'], { cwd: `${REPO_ROOT}console`, stdio: 'inherit' });
}

/**
 * The telemetry hook the launcher is started with from its source (its `start` script names it by
 * its package export, which resolves only from a package that depends on the kit). The mesh's
 * compiled replicas get theirs from deploy/local's `spawnReplica`.
 */
export const TELEMETRY_HOOK = {
  source: pathToFileURL(`${REPO_ROOT}packages/kit/src/telemetry/register.ts`).href,
};

/**
 * Starts a command from the repository root in a process group of its own, so stopping it also
 * stops what it started (`pnpm start` runs the launcher as its child).
 */
export function startProcess(command: string, args: string[], env: Record<string, string>, cwd = REPO_ROOT): RunningProcess {
  const child = spawn(command, args, {
    cwd,
    env: { ...process.env, NODE_ENV: 'test', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const signal = (name: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, name);
    } catch {
      // Already gone.
    }
  };
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    output: () => output,
    stop: async (graceMs = 15_000) => {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      signal('SIGINT');
      const timer = setTimeout(() => signal('SIGKILL'), graceMs);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

/** pino's numeric levels: `error` and above are failures a process reported itself; a 503's cause is a `warn`. */
const PINO_ERROR = 50;
export const PINO_WARN = 40;

/**
 * The lines a process logged at `atLeast` or above (error, unless told; pino's JSON lines, others
 * are skipped), so a suite that saw only "500 internal_error" from outside can print why (the body
 * hides it by design).
 */
export function loggedErrors(output: string, limit = 20, atLeast = PINO_ERROR): string[] {
  const errors: string[] = [];
  for (const line of output.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      const { level } = JSON.parse(line) as { level?: unknown };
      if (typeof level === 'number' && level >= atLeast) errors.push(line);
    } catch {
      // Not a log line.
    }
    if (errors.length >= limit) break;
  }
  return errors;
}

/**
 * Resolves the moment what the process printed satisfies `printed` (checked at every chunk it
 * writes, and at once); rejects when it exits first or `timeoutMs` passes.
 */
export function waitForOutput(what: string, running: RunningProcess, printed: (output: string) => boolean, timeoutMs = 120_000): Promise<void> {
  const { child } = running;
  return new Promise((resolve, reject) => {
    const finish = (error?: Error) => {
      clearTimeout(timer);
      child.stdout?.off('data', check);
      child.stderr?.off('data', check);
      child.off('exit', exited);
      if (error) reject(error);
      else resolve();
    };
    // The harness's own listeners were added first, so output() already holds the chunk.
    const check = () => {
      if (printed(running.output())) finish();
    };
    const exited = (code: number | null) => finish(new Error(`${what} exited with ${code}:\n${running.output()}`));
    const timer = setTimeout(() => finish(new Error(`${what} not seen within ${timeoutMs} ms:\n${running.output()}`)), timeoutMs);
    child.stdout?.on('data', check);
    child.stderr?.on('data', check);
    child.once('exit', exited);
    if (child.exitCode !== null) exited(child.exitCode);
    else check();
  });
}

/** The line `pnpm start` prints once every part of the platform serves. */
export const PLATFORM_UP = (output: string) => output.includes('Agent platform running at');

/**
 * Probes until `probe` resolves true, the process dies, or `timeoutMs` passes: only for readiness
 * that no process announces (the distributed gateway's, which depends on four other processes),
 * as a Kubernetes readiness probe would.
 */
export async function waitUntil(what: string, running: RunningProcess, probe: () => Promise<boolean>, timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (running.child.exitCode !== null) {
      throw new Error(`${what} exited with ${running.child.exitCode}:\n${running.output()}`);
    }
    if (await probe().catch(() => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
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

export interface LocalPlatformProcess extends RunningProcess {
  baseUrl: string;
  /** From spawning to the first 200 of /readyz, milliseconds. */
  msToFirst200: number;
}

export interface LocalPlatformOptions {
  dataDir: string;
  /** The gateway's port; without it a free one is chosen (see startLocalPlatformProcess). */
  port?: number;
  env?: Record<string, string>;
  via?: 'pnpm' | 'node';
  /** The checkout whose `pnpm start` runs (another commit's worktree, for an A/B); this one by default. */
  root?: string;
  /** Options for node itself (`--cpu-prof`); implies running the entry point directly. */
  nodeOptions?: string[];
}

/** The flags deploy/local's start script gives node before its imports (the heap's tuning), for the entry point run directly. */
export const LOCAL_START_FLAGS = ((): string[] => {
  const [, ...words] = (JSON.parse(readFileSync(join(REPO_ROOT, 'deploy/local/package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start.split(' ');
  return words.slice(0, words.indexOf('--import'));
})();

/** What `pnpm start` runs after node's own flags: the local entry point, from source, with the telemetry hook. */
export const LOCAL_ENTRY = ['--import', 'tsx', '--import', TELEMETRY_HOOK.source, 'deploy/local/src/main.ts'];

/** Starts tried on fresh ports when another process took a chosen one first. */
const PORT_ATTEMPTS = 3;

/**
 * The all-in-one launcher as a process on `dataDir`, with every service on a free port: through
 * `pnpm start` exactly as a developer runs it (the benchmarks), or its entry point run directly.
 * `freePort` can only say a port was free a moment ago: another process may bind it before the
 * platform does (seen in CI: "port 40559 is in use (PORT)"). So a start the platform refuses for a
 * taken port is tried again on fresh ones, unless the caller named the gateway's port.
 */
export async function startLocalPlatformProcess(options: LocalPlatformOptions): Promise<LocalPlatformProcess> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await startLocalPlatformOnce({ ...options, port: options.port ?? (await freePort()) });
    } catch (error) {
      const portTaken = error instanceof Error && /port \d+ is in use/.test(error.message);
      if (!portTaken || attempt >= PORT_ATTEMPTS || (options.port !== undefined && /\(PORT\)/.test(error.message))) throw error;
    }
  }
}

async function startLocalPlatformOnce(options: LocalPlatformOptions & { port: number }): Promise<LocalPlatformProcess> {
  if (options.root !== undefined && (options.via !== 'pnpm' || options.nodeOptions)) throw new Error('another checkout starts only through its `pnpm start`');
  const env = {
    DATA_DIR: options.dataDir,
    PORT: String(options.port),
    EMBEDDED_PG_PORT: String(await freePort()),
    IDENTITY_GRPC_PORT: '0',
    AGENT_MEMORY_GRPC_PORT: '0',
    WEBHOOK_DISPATCHER_GRPC_PORT: '0',
    WORKFLOW_RUNNER_GRPC_PORT: '0',
    WORKFLOW_INGRESS_PORT: '0',
    ...options.env,
  };
  const started = performance.now();
  const running =
    options.via === 'pnpm' && !options.nodeOptions
      ? startProcess('pnpm', ['start'], env, options.root)
      : startProcess(process.execPath, [...(options.nodeOptions ?? []), ...LOCAL_START_FLAGS, ...LOCAL_ENTRY], env);
  const baseUrl = `http://127.0.0.1:${options.port}`;
  try {
    await waitForOutput('the all-in-one platform', running, PLATFORM_UP);
    if (!(await httpOk(`${baseUrl}/readyz`))) throw new Error(`the all-in-one platform said it was up, but is not ready:\n${running.output()}`);
  } catch (error) {
    await running.stop();
    throw error;
  }
  return { ...running, stop: (graceMs) => stopWithPostmaster(running, options.dataDir, graceMs), baseUrl, msToFirst200: performance.now() - started };
}

/**
 * Stops the launcher; a PostgreSQL it left running (it runs in a process group of its own, out of
 * a terminal's Ctrl-C, so a launcher killed after the grace leaves it) is killed too, and said.
 */
async function stopWithPostmaster(running: RunningProcess, dataDir: string, graceMs?: number): Promise<number | null> {
  const code = await running.stop(graceMs);
  const pid = await postmasterPid(clusterDirOf(dataDir));
  if (pid !== undefined) {
    process.kill(pid, 'SIGKILL');
    process.stderr.write(`the launcher on ${dataDir} left its PostgreSQL (pid ${pid}) running; killed it\n`);
  }
  return code;
}
