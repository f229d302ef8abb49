import { createClient, type AgentPlatformClient } from '@agent-platform/client';
import { startLocalPlatformProcess, type LocalPlatformProcess } from '../e2e/harness/processes.js';

/**
 * `pnpm start` exactly as a developer runs it, on `dataDir`, with the services on free ports.
 * BENCH_CPU_PROF_DIR: its entry point runs under --cpu-prof instead and writes its profile there on
 * stop (one file per thread), for the self-time scripts or DevTools.
 */
export function startPlatform(options: { dataDir: string; port: number; env?: Record<string, string> }): Promise<LocalPlatformProcess> {
  const env = { LOG_LEVEL: 'warn', ...options.env };
  const profileDir = process.env.BENCH_CPU_PROF_DIR;
  return profileDir
    ? startLocalPlatformProcess({ ...options, env, nodeOptions: ['--cpu-prof', '--cpu-prof-dir', profileDir] })
    : startLocalPlatformProcess({ ...options, env, via: 'pnpm' });
}

/** The data of a typed call, or an error naming `what` with the status and the API's error body. */
export function dataOf<Data>(result: { data?: Data; error?: unknown; response: Response }, what: string): Data {
  if (!result.response.ok || result.data === undefined) throw new Error(`${what}: ${result.response.status} ${JSON.stringify(result.error)}`);
  return result.data;
}

export interface BenchUser {
  /** The typed client acting as the user, for setting up what the load needs. */
  client: AgentPlatformClient;
  /** Its bearer token, for the load generators' own requests. */
  accessToken: string;
}

/** Registers the user (a new one unless `email` is given; registering it again is harmless) and logs in. */
export async function signIn(baseUrl: string, email = `bench-${Date.now()}-${Math.random().toString(36).slice(2)}@example.com`): Promise<BenchUser> {
  const password = 'bench password 123';
  const anonymous = createClient({ baseUrl });
  // A 409 when the user exists already (a kept data directory) is fine: the login tells.
  await anonymous.POST('/api/v1/auth/register', { body: { email, password } });
  const { access_token: accessToken } = dataOf(await anonymous.POST('/api/v1/auth/login', { body: { username: email, password } }), 'login');
  return { client: createClient({ baseUrl, accessToken }), accessToken };
}

/** `signIn`'s bearer token alone, for callers that send their own requests. */
export async function newAccessToken(baseUrl: string, email?: string): Promise<string> {
  return (await signIn(baseUrl, email)).accessToken;
}
