import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';

export interface ChildService {
  process: ChildProcess;
  /** The numbers the child printed after `ready` (its ports). */
  ports: number[];
  /** SIGKILL, the way a crash or an OOM kill ends a process: no shutdown hooks, nothing handed back. */
  kill(): Promise<void>;
}

/**
 * Runs `node --import tsx <entry>` from `cwd` with `env` added, and resolves once it prints a line
 * `ready <port> [<port> …]`; rejects if it exits first. For tests that must kill a service hard.
 */
export async function spawnChildService(entry: string, options: { cwd: string; env: Record<string, string> }): Promise<ChildService> {
  const child = spawn(process.execPath, ['--import', 'tsx', entry], { cwd: options.cwd, env: { ...process.env, ...options.env }, stdio: ['ignore', 'pipe', 'inherit'] });
  const ports = await new Promise<number[]>((resolve, reject) => {
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
      const match = /^ready((?: \d+)+)$/m.exec(output);
      if (match) resolve(match[1]!.trim().split(' ').map(Number));
    });
    child.once('exit', (code) => reject(new Error(`${entry} exited before it was ready (${code})`)));
  });
  return {
    process: child,
    ports,
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGKILL');
      await exited;
    },
  };
}
