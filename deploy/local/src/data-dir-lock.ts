import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** The launcher's own lock on DATA_DIR's embedded PostgreSQL: a file holding its pid. */
const LOCK_FILE = 'postgres.lock';

/** Another agent platform, still running, uses this data directory's PostgreSQL. */
export class DataDirInUseError extends Error {
  override readonly name = 'DataDirInUseError';
  constructor(
    readonly dataDir: string,
    /** The other launcher's process, or (when PostgreSQL itself refused) its postmaster. */
    readonly pid: number,
  ) {
    super(`${dataDir} is in use by process ${pid}`);
  }
}

/**
 * Takes `dataDir` for this process, or throws DataDirInUseError naming the live process that holds
 * it. A lock left by a process that is gone (killed, crashed) is taken over: its PostgreSQL, if
 * still running, is an orphan the caller may stop. Resolves to the release.
 *
 * Only a pid, as PostgreSQL's own postmaster.pid: after a reboot a stale pid may name an unrelated
 * process, which the message then names too (the user deletes the file); nothing is ever stopped
 * on its account.
 */
export async function lockDataDir(dataDir: string): Promise<() => Promise<void>> {
  const file = join(dataDir, LOCK_FILE);
  // A stale lock is removed, then the file created exclusively again: of two racing copies one wins.
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      await writeFile(file, `${process.pid}\n`, { flag: 'wx' });
      return async () => {
        if ((await lockHolder(file)) === process.pid) await rm(file, { force: true });
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = await lockHolder(file);
      if (holder !== undefined && holder !== process.pid && isRunning(holder)) throw new DataDirInUseError(dataDir, holder);
      await rm(file, { force: true });
    }
  }
  throw new Error(`${file} keeps changing: is another agent platform starting on ${dataDir}?`);
}

async function lockHolder(file: string): Promise<number | undefined> {
  const pid = Number((await readFile(file, 'utf8').catch(() => '')).trim());
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

/** Whether a process with this id runs, ours to signal or not (EPERM: it runs as another user). */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
