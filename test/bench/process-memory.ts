import { readdirSync, readFileSync } from 'node:fs';

export interface Memory {
  /** KiB resident. */
  rss: number;
  /** KiB proportional set: shared pages split among the processes sharing them. */
  pss: number;
}

/** Every process in `rootPid`'s tree with its role: platform, postgres or other. */
function processTree(rootPid: number): { pid: number; role: string }[] {
  const parents = new Map<number, number>();
  const roles = new Map<number, string>();
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    try {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      parents.set(pid, Number(/PPid:\s+(\d+)/.exec(status)?.[1]));
      // Node names its main thread `MainThread`, so processes are told apart by their command line.
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      roles.set(pid, cmdline.includes('main.ts') ? 'platform' : cmdline.includes('postgres') ? 'postgres' : 'other');
    } catch {
      // The process ended while we looked.
    }
  }
  const inTree = (pid: number): boolean => pid === rootPid || (parents.has(pid) && pid > 1 && inTree(parents.get(pid)!));
  return [...roles].filter(([pid]) => inTree(pid)).map(([pid, role]) => ({ pid, role }));
}

/** Sums `read(pid)` over `rootPid`'s tree by role; a process that ends meanwhile counts nothing. */
function sumByRole<T>(rootPid: number, zero: T, read: (pid: number) => T, add: (a: T, b: T) => T): Map<string, T> {
  const totals = new Map<string, T>();
  for (const { pid, role } of processTree(rootPid)) {
    try {
      totals.set(role, add(totals.get(role) ?? zero, read(pid)));
    } catch {
      // Gone.
    }
  }
  return totals;
}

/** Memory of every process in `rootPid`'s tree, summed by role (platform, postgres, other). */
export function memoryByRole(rootPid: number): Map<string, Memory> {
  return sumByRole(
    rootPid,
    { rss: 0, pss: 0 },
    (pid) => {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
      return { rss: Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0), pss: Number(/^Pss:\s+(\d+)/m.exec(rollup)?.[1] ?? 0) };
    },
    (a, b) => ({ rss: a.rss + b.rss, pss: a.pss + b.pss }),
  );
}

/**
 * CPU time (user + system, milliseconds) used so far by `rootPid`'s tree, by role. Per request it
 * is steadier than req/s on a machine with other load, which slows a run down but costs it little.
 */
export function cpuByRole(rootPid: number): Map<string, number> {
  const ticksPerMs = 100 / 1000; // USER_HZ
  return sumByRole(
    rootPid,
    0,
    (pid) => {
      // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      return (Number(fields[11]) + Number(fields[12])) / ticksPerMs;
    },
    (a, b) => a + b,
  );
}

export function describeMemory(totals: Map<string, Memory>): string {
  const mib = (kib: number | undefined) => Math.round((kib ?? 0) / 1024);
  return `platform process RSS ${mib(totals.get('platform')?.rss)} MiB; embedded PostgreSQL PSS ${mib(totals.get('postgres')?.pss)} MiB (all its processes)`;
}

