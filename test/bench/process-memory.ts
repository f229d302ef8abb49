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
      // Node names its main thread `MainThread`, so processes are told apart by their command line:
      // PostgreSQL's by the program (a backend retitles itself `postgres: …`), not by an argument.
      const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      const program = argv[0]?.split('/').at(-1) ?? '';
      roles.set(pid, argv.some((arg) => arg.endsWith('main.ts') || arg.endsWith('/dist/main.js')) ? 'platform' : program.startsWith('postgres') ? 'postgres' : 'other');
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

/** CPU time (user + system, milliseconds) used so far by each process of a tree, with its role. */
export type CpuSample = Map<number, { role: string; ms: number }>;

export function cpuSample(rootPid: number): CpuSample {
  const ticksPerMs = 100 / 1000; // USER_HZ
  const sample: CpuSample = new Map();
  for (const { pid, role } of processTree(rootPid)) {
    try {
      // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      sample.set(pid, { role, ms: (Number(fields[11]) + Number(fields[12])) / ticksPerMs });
    } catch {
      // Gone.
    }
  }
  return sample;
}

/**
 * CPU time (milliseconds) `rootPid`'s tree used since `before`, by role: per process, so one that
 * started meanwhile (a PostgreSQL backend) counts from zero and one that ended takes nothing away.
 * Per request it is steadier than req/s on a machine with other load, which slows a run down but
 * costs it little.
 */
export function cpuSince(before: CpuSample, rootPid: number): Map<string, number> {
  const used = new Map<string, number>();
  for (const [pid, { role, ms }] of cpuSample(rootPid)) used.set(role, (used.get(role) ?? 0) + ms - (before.get(pid)?.ms ?? 0));
  return used;
}

export function describeMemory(totals: Map<string, Memory>): string {
  const mib = (kib: number | undefined) => Math.round((kib ?? 0) / 1024);
  return `platform process RSS ${mib(totals.get('platform')?.rss)} MiB; embedded PostgreSQL PSS ${mib(totals.get('postgres')?.pss)} MiB (all its processes)`;
}

