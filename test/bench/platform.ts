import { startLocalPlatformProcess, type LocalPlatformProcess } from '../e2e/harness/processes.js';

/** `pnpm start` exactly as a developer runs it, on `dataDir`, with the services on free ports. */
export function startPlatform(options: { dataDir: string; port: number; env?: Record<string, string> }): Promise<LocalPlatformProcess> {
  return startLocalPlatformProcess({ ...options, env: { LOG_LEVEL: 'warn', ...options.env }, via: 'pnpm' });
}

/** Registers a fresh user and returns an access token. */
/** Registers the user (a new one unless `email` is given; registering it again is harmless) and logs in. */
export async function newAccessToken(baseUrl: string, email = `bench-${Date.now()}-${Math.random().toString(36).slice(2)}@example.com`): Promise<string> {
  const password = 'bench password 123';
  const json = { 'content-type': 'application/json' };
  await fetch(`${baseUrl}/api/v1/auth/register`, { method: 'POST', headers: json, body: JSON.stringify({ email, password }) });
  const login = await fetch(`${baseUrl}/api/v1/auth/login`, { method: 'POST', headers: json, body: JSON.stringify({ username: email, password }) });
  return ((await login.json()) as { access_token: string }).access_token;
}
