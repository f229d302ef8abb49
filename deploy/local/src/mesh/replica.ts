import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

/** The V8 flags the image's entry point gives node (deploy/docker/Dockerfile), so replicas run as pods do. */
const NODE_FLAGS = ['--max-semi-space-size=64', '--heap-growing-percent=100', '--conditions=compiled', '--enable-source-maps'];
const TELEMETRY_HOOK = new URL('../../../../packages/kit/dist/telemetry/register.js', import.meta.url).href;

/** How node starts a replica, before its entry point: for a bench's process that must run as one does. */
export const REPLICA_NODE_ARGUMENTS: readonly string[] = [...NODE_FLAGS, '--import', TELEMETRY_HOOK];

/** Replicas never outlive the launcher, however the launcher ends: one listener for all of them. */
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** Keeps this much of what a replica printed, for failure messages. */
const OUTPUT_KEPT = 256 * 1024;

export interface ReplicaProcess {
  /** `identity-1`, `gateway-2`: its name in the launcher's output. */
  readonly name: string;
  readonly child: ChildProcess;
  /** The last part of what it printed. */
  output(): string;
  /** Resolves with its exit code (null when a signal ended it). */
  readonly exited: Promise<number | null>;
  /** SIGTERM (a drain), then SIGKILL after `graceMs`. */
  stop(graceMs: number): Promise<number | null>;
  /** SIGKILL at once, as a crash or an OOM kill does. */
  kill(): Promise<number | null>;
}

export interface SpawnReplicaOptions {
  name: string;
  /** The package directory, relative to the repository: `services/identity`, `gateway`. */
  packageDir: string;
  env: Record<string, string>;
  /** Each line it prints, as it prints it (the launcher echoes them with the replica's name). */
  onLine?: (name: string, line: string) => void;
}

/** A part of the platform as its image runs it: the compiled `dist/main.js` with the telemetry hook. */
export function spawnReplica(options: SpawnReplicaOptions): ReplicaProcess {
  const child = spawn(process.execPath, [...REPLICA_NODE_ARGUMENTS, `${options.packageDir}/dist/main.js`], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    // A group of its own: Ctrl-C in a terminal signals the launcher only, which drains the
    // replicas in order (gateways first); a second signal from the terminal would cut their drain.
    detached: true,
  });
  running.add(child);
  let output = '';
  let partial = '';
  const take = (chunk: Buffer) => {
    const text = chunk.toString();
    output = (output + text).slice(-OUTPUT_KEPT);
    if (!options.onLine) return;
    const lines = (partial + text).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) options.onLine(options.name, line);
  };
  child.stdout.on('data', take);
  child.stderr.on('data', take);
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      running.delete(child);
      resolve(code);
    }),
  );
  const signal = (name: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(name);
  };
  return {
    name: options.name,
    child,
    output: () => output,
    exited,
    stop: async (graceMs) => {
      signal('SIGTERM');
      const timer = setTimeout(() => signal('SIGKILL'), graceMs);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
    kill: async () => {
      signal('SIGKILL');
      return exited;
    },
  };
}
