import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * The PostgreSQL server running on a cluster directory, by its `postmaster.pid` (whose first line
 * is the pid), when it still runs. Light on purpose: test harnesses read it without loading the
 * launcher.
 */
export async function postmasterPid(clusterDir: string): Promise<number | undefined> {
  const pidFile = join(clusterDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return undefined;
  const pid = Number((await readFile(pidFile, 'utf8').catch(() => '')).split('\n')[0]);
  return Number.isInteger(pid) && pid > 0 && processIsAlive(pid) ? pid : undefined;
}

/** Whether a process with this id runs (and may be signalled by us). */
export function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Where the launcher keeps its PostgreSQL cluster in DATA_DIR. */
export function clusterDirOf(dataDir: string): string {
  return join(dataDir, 'postgres');
}
