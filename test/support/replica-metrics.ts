import type { MeshReplica } from '@agent-platform/local/mesh';

/** The sum of a series' samples (`name{…} value`) on one replica's own /metrics, over the lines `keep` accepts. */
export async function replicaSum(replica: MeshReplica, series: string, keep: (line: string) => boolean = () => true): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${replica.ports.metrics}/metrics`)).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${series}{`) && keep(line))
    .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
}
