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

/**
 * Rate limits and credits far above any bench's load, so a run measures the work of a request
 * rather than the 429 or 402 path (counting still runs, as in production).
 */
export const UNLIMITED = { RATE_LIMITS: 'free:100000000/100000000,pro:100000000/100000000,enterprise:0/0', WELCOME_CREDITS: '100000000' };

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

/** The main thread's garbage-collection pauses so far, by kind, from the all-in-one process's `/metrics`. */
export interface GcPauses {
  minor: { count: number; seconds: number };
  major: { count: number; seconds: number };
  /** Event-loop delay p99 since the previous scrape, seconds (the runtime instrumentation resets it on each scrape). */
  eventLoopDelayP99: number;
}

export async function gcPauses(baseUrl: string): Promise<GcPauses> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  const value = (pattern: RegExp) => Number(pattern.exec(text)?.[1] ?? Number.NaN);
  const ofKind = (kind: string) => ({
    count: value(new RegExp(`^v8js_gc_duration_count\\{v8js_gc_type="${kind}"[^}]*\\} (\\S+)$`, 'm')),
    seconds: value(new RegExp(`^v8js_gc_duration_sum\\{v8js_gc_type="${kind}"[^}]*\\} (\\S+)$`, 'm')),
  });
  return { minor: ofKind('minor'), major: ofKind('major'), eventLoopDelayP99: value(/^nodejs_eventloop_delay_p99\{[^}]*\} (\S+)$/m) };
}

/** The pauses between two readings, in words: how many, and how long on average. */
export function describePauses(before: GcPauses, after: GcPauses): { line: string; minorMeanMs: number } {
  const between = (kind: 'minor' | 'major') => {
    const count = after[kind].count - before[kind].count;
    const meanMs = count > 0 ? (1000 * (after[kind].seconds - before[kind].seconds)) / count : 0;
    return { count, meanMs };
  };
  const minor = between('minor');
  const major = between('major');
  return {
    line: `${minor.count} young-generation pauses (mean ${minor.meanMs.toFixed(1)} ms), ${major.count} full (mean ${major.meanMs.toFixed(1)} ms); event-loop delay p99 ${(1000 * after.eventLoopDelayP99).toFixed(0)} ms`,
    minorMeanMs: minor.meanMs,
  };
}
