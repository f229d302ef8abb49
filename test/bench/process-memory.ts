import { readdirSync, readFileSync } from 'node:fs';

export interface Memory {
  /** KiB resident. */
  rss: number;
  /** KiB proportional set: shared pages split among the processes sharing them. */
  pss: number;
}

type RoleOf = (argv: readonly string[]) => string;

/** The program's name; a process that retitled itself (`postgres: 15/main: …`) is named by its first word. */
function programOf(argv: readonly string[]): string {
  return argv[0]?.split(' ')[0]?.split('/').at(-1) ?? '';
}

/**
 * Platform, postgres or other: Node names its main thread `MainThread`, so processes are told apart
 * by their command line; PostgreSQL's by the program (a backend retitles itself `postgres: …`).
 */
const platformOrPostgres: RoleOf = (argv) =>
  argv.some((arg) => arg.endsWith('main.ts') || arg.endsWith('/dist/main.js')) ? 'platform' : programOf(argv).startsWith('postgres') ? 'postgres' : 'other';

/**
 * For an account of the whole machine: the part a platform process runs (`gateway`, `identity`…,
 * `local` for the all-in-one), the bench's one-process peer or hop processes, or the server it is.
 */
const partOrServer: RoleOf = (argv) => {
  for (const [at, arg] of argv.entries()) {
    const part = /([\w-]+)\/(?:dist\/main\.js|src\/main\.ts)$/.exec(arg)?.[1];
    if (part) return part;
    if (arg.endsWith('peer-server.ts')) return 'peer';
    if (arg.endsWith('hop-server.ts')) return `hop ${argv[at + 1] ?? ''}`;
  }
  const program = programOf(argv);
  return ['postgres', 'redis-server', 'nats-server'].find((server) => program.startsWith(server)) ?? 'other';
};

/** Every process in `rootPid`'s tree with its role. */
function processTree(rootPid: number, roleOf: RoleOf = platformOrPostgres): { pid: number; role: string }[] {
  const parents = new Map<number, number>();
  const roles = new Map<number, string>();
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    try {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      parents.set(pid, Number(/PPid:\s+(\d+)/.exec(status)?.[1]));
      roles.set(pid, roleOf(readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')));
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

export function cpuSample(rootPid: number, roleOf?: RoleOf): CpuSample {
  const ticksPerMs = 100 / 1000; // USER_HZ
  const sample: CpuSample = new Map();
  for (const { pid, role } of processTree(rootPid, roleOf)) {
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
export function cpuSince(before: CpuSample, rootPid: number, roleOf?: RoleOf): Map<string, number> {
  const used = new Map<string, number>();
  for (const [pid, { role, ms }] of cpuSample(rootPid, roleOf)) used.set(role, (used.get(role) ?? 0) + ms - (before.get(pid)?.ms ?? 0));
  return used;
}

/** CPU time of every process on the machine, by the part or server it is (`partOrServer`). */
export const machineCpuSample = (): CpuSample => cpuSample(1, partOrServer);
export const machineCpuSince = (before: CpuSample): Map<string, number> => cpuSince(before, 1, partOrServer);

export function describeMemory(totals: Map<string, Memory>): string {
  const mib = (kib: number | undefined) => Math.round((kib ?? 0) / 1024);
  return `platform process RSS ${mib(totals.get('platform')?.rss)} MiB; embedded PostgreSQL PSS ${mib(totals.get('postgres')?.pss)} MiB (all its processes)`;
}

