import { readdirSync, readFileSync } from 'node:fs';

export interface Memory {
  /** KiB resident. */
  rss: number;
  /** KiB proportional set: shared pages split among the processes sharing them. */
  pss: number;
}

/** Memory of every process in `rootPid`'s tree, summed by role (platform, postgres, other). */
export function memoryByRole(rootPid: number): Map<string, Memory> {
  const parents = new Map<number, number>();
  const roles = new Map<number, string>();
  const memory = new Map<number, Memory>();
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    try {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      parents.set(pid, Number(/PPid:\s+(\d+)/.exec(status)?.[1]));
      // Node names its main thread `MainThread`, so processes are told apart by their command line.
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      roles.set(pid, cmdline.includes('main.ts') ? 'platform' : cmdline.includes('postgres') ? 'postgres' : 'other');
      const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
      memory.set(pid, { rss: Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0), pss: Number(/^Pss:\s+(\d+)/m.exec(rollup)?.[1] ?? 0) });
    } catch {
      // The process ended while we looked.
    }
  }
  const inTree = (pid: number): boolean => pid === rootPid || (parents.has(pid) && pid > 1 && inTree(parents.get(pid)!));
  const totals = new Map<string, Memory>();
  for (const [pid, usage] of memory) {
    if (!inTree(pid)) continue;
    const role = roles.get(pid)!;
    const total = totals.get(role) ?? { rss: 0, pss: 0 };
    totals.set(role, { rss: total.rss + usage.rss, pss: total.pss + usage.pss });
  }
  return totals;
}

export function describeMemory(totals: Map<string, Memory>): string {
  const mib = (kib: number | undefined) => Math.round((kib ?? 0) / 1024);
  return `platform process RSS ${mib(totals.get('platform')?.rss)} MiB; embedded PostgreSQL PSS ${mib(totals.get('postgres')?.pss)} MiB (all its processes)`;
}

