import { spawn, type ChildProcess } from 'node:child_process';
import { REPO_ROOT } from '../e2e/harness/processes.js';

export interface BenchPlatform {
  child: ChildProcess;
  baseUrl: string;
  /** From spawning `pnpm start` to the first 200 of /readyz. */
  msToFirst200: number;
  stop(): Promise<void>;
}

/** `pnpm start` exactly as a developer runs it, on `dataDir`, with the services on free ports. */
export async function startPlatform(options: { dataDir: string; port: number; pgPort: number; env?: Record<string, string> }): Promise<BenchPlatform> {
  const started = performance.now();
  const child = spawn('pnpm', ['start'], {
    cwd: REPO_ROOT,
    detached: true,
    stdio: 'ignore',
    env: {
      ...process.env,
      DATA_DIR: options.dataDir,
      PORT: String(options.port),
      EMBEDDED_PG_PORT: String(options.pgPort),
      IDENTITY_GRPC_PORT: '0',
      WEBHOOK_DISPATCHER_GRPC_PORT: '0',
      LOG_LEVEL: 'warn',
      ...options.env,
    },
  });
  const baseUrl = `http://127.0.0.1:${options.port}`;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`pnpm start exited with ${child.exitCode}`);
    if (await fetch(`${baseUrl}/readyz`).then((r) => r.status === 200, () => false)) break;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return {
    child,
    baseUrl,
    msToFirst200: performance.now() - started,
    stop: async () => {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      process.kill(-child.pid!, 'SIGINT');
      await exited;
      // pnpm exits with its child; give PostgreSQL a moment to finish its own shutdown.
      await new Promise((resolve) => setTimeout(resolve, 500));
    },
  };
}

/** Registers a fresh user and returns an access token. */
export async function newAccessToken(baseUrl: string): Promise<string> {
  const email = `bench-${Date.now()}-${Math.random().toString(36).slice(2)}@example.com`;
  const password = 'bench password 123';
  const json = { 'content-type': 'application/json' };
  await fetch(`${baseUrl}/api/v1/auth/register`, { method: 'POST', headers: json, body: JSON.stringify({ email, password }) });
  const login = await fetch(`${baseUrl}/api/v1/auth/login`, { method: 'POST', headers: json, body: JSON.stringify({ username: email, password }) });
  return ((await login.json()) as { access_token: string }).access_token;
}
